// swift-tools-version:6.0
import PackageDescription
let package = Package(
  name: "execproto",
  targets: [
    .target(name: "CHook"),
    .executableTarget(name: "proto", dependencies: ["CHook"], swiftSettings: [.swiftLanguageMode(.v6)]),
    .executableTarget(name: "protorl", swiftSettings: [.swiftLanguageMode(.v6)]),
  ])

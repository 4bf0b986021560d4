// swift-tools-version:6.0
import Foundation
import PackageDescription

// An application built on stateserver the way a user's would be: it depends on the package by
// path. SwiftPM names a path dependency after its directory, so the products' `package:` is the
// clone's directory name; computing it keeps this example building in any clone. Your own
// package writes both out: `.package(path: "../stateserver")`, `package: "stateserver"`.
let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
  .deletingLastPathComponent().deletingLastPathComponent()
let dependency = root.lastPathComponent
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
  name: "timers",
  dependencies: [.package(path: root.path)],
  targets: [
    .target(
      name: "Timers", dependencies: [.product(name: "StateKit", package: dependency)],
      swiftSettings: strict),
    .executableTarget(
      name: "timers",
      // CStartupSignals: a signal in the first milliseconds cannot kill the server unclean.
      dependencies: [
        "Timers", .product(name: "StateServer", package: dependency),
        .product(name: "CStartupSignals", package: dependency),
      ],
      swiftSettings: strict),
    .testTarget(
      name: "TimersTests",
      dependencies: ["Timers", .product(name: "StateKitTesting", package: dependency)],
      swiftSettings: strict),
  ]
)

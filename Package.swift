// swift-tools-version:6.0
import PackageDescription

// Layers (docs/architecture.md): a target may import only what its arrow points to.
//   stateserver -> StateServer -> StateKit -> JSON -> CJansson
//   stateserver -> Features -> StateKit
//   StateServer -> CSQLite (persistence)
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
  name: "stateserver",
  products: [
    .executable(name: "stateserver", targets: ["stateserver"]),
    .library(name: "JSON", targets: ["JSON"]),
    .library(name: "StateKit", targets: ["StateKit"]),
    .library(name: "StateKitTesting", targets: ["StateKitTesting"]),
    .library(name: "StateServer", targets: ["StateServer"]),
    .library(name: "Features", targets: ["Features"]),
  ],
  targets: [
    .systemLibrary(
      name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
    .systemLibrary(
      name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
    .target(name: "JSON", dependencies: ["CJansson"], swiftSettings: strict),
    .target(name: "StateKit", dependencies: ["JSON"], swiftSettings: strict),
    .target(name: "StateKitTesting", dependencies: ["StateKit", "JSON"], swiftSettings: strict),
    .target(name: "StateServer", dependencies: ["StateKit", "CSQLite"], swiftSettings: strict),
    .target(name: "Features", dependencies: ["StateKit"], swiftSettings: strict),
    // Benchmarks and cross-language checks of the JSON layer (bench/json, bench/patch, tests/).
    .executableTarget(name: "json-tool", dependencies: ["JSON"], swiftSettings: strict),
    // The StateKit benchmark (bench/statekit): per-action cost of send + reduce + publish.
    .executableTarget(
      name: "statekit-bench", dependencies: ["StateKit", "JSON"], swiftSettings: strict),
    .executableTarget(
      name: "stateserver", dependencies: ["StateServer", "Features"], swiftSettings: strict),
    .testTarget(name: "JSONTests", dependencies: ["JSON"], swiftSettings: strict),
    .testTarget(
      name: "StateKitTests", dependencies: ["StateKit", "StateKitTesting"], swiftSettings: strict),
    .testTarget(
      name: "StateServerTests", dependencies: ["StateServer", "StateKitTesting"],
      swiftSettings: strict),
    .testTarget(
      name: "FeaturesTests", dependencies: ["Features", "StateKitTesting"], swiftSettings: strict),
  ]
)

// swift-tools-version:6.0
import PackageDescription

// Layers (docs/architecture.md): a target may import only what its arrow points to.
//   stateserver -> StateServer -> StateKit -> JSON (JSON in Swift but for CArrayScan below it)
//   json-tool -> JSON, CJansson (jansson, to measure the Swift writer and parser against)
//   stateserver -> Features -> StateKit
//   StateServer -> CSQLite (persistence), CSignals (signal forwarding), CPosix
//   stateserver -> CStartupSignals (blocks the shutdown signals before any other code runs;
//   a product, so that an application's own executable links it the same way)
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

// Cross-module optimization for the two library layers under the features: their function
// bodies go into their module files, so a store's send path (Store, ViewPublisher, PatchWalk;
// `Feature._send`) is specialized in each feature's own module instead of running as generic
// code that looks up the metadata of every type it touches (docs/architecture.md, "A store's
// send path is specialized per feature", has the numbers). Release only.
// Not on StateServer or globally (`-Xswiftc -cross-module-optimization`): Swift 6.3.1 then
// compiles the executable's top-level code to fall off its end right after reading
// `CommandLine.arguments` (a crash at start-up).
// Behind `STATESERVER_CROSS_MODULE=1` (the Makefile exports it): the flag is an unsafe flag,
// and SwiftPM refuses a package resolved by version that has one, so an application that
// depends on a tagged release gets the package without it (and the generic path).
let crossModule: [SwiftSetting] =
  Context.environment["STATESERVER_CROSS_MODULE"] == "1"
  ? [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))] : []

let package = Package(
  name: "stateserver",
  products: [
    .executable(name: "stateserver", targets: ["stateserver"]),
    .library(name: "JSON", targets: ["JSON"]),
    .library(name: "StateKit", targets: ["StateKit"]),
    .library(name: "StateKitTesting", targets: ["StateKitTesting"]),
    .library(name: "StateServer", targets: ["StateServer"]),
    .library(name: "Features", targets: ["Features"]),
    // For an application's executable beside StateServer: SIGTERM, SIGINT and SIGHUP blocked
    // from the first instruction until `Server.main` handles them (README, "A server of your
    // own"). Not part of StateServer itself: a test runner linking it would lose Ctrl-C.
    .library(name: "CStartupSignals", targets: ["CStartupSignals"]),
  ],
  targets: [
    .systemLibrary(
      name: "CJansson", pkgConfig: "jansson", providers: [.apt(["libjansson-dev"])]),
    .systemLibrary(
      name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
    // Async-signal-safe code must be C: see Sources/CSignals/include/CSignals.h.
    .target(name: "CSignals"),
    // Only executables link it (the product above): a test runner must keep its default SIGINT.
    .target(name: "CStartupSignals"),
    // The POSIX and glibc calls Swift's Glibc module does not import: a write to stdout that
    // never blocks (the main thread's direct writes), malloc_trim, mremap and a pipe's size
    // (its header says why).
    .target(name: "CPosix"),
    // The bracket scan of a large array before its parse, in vector instructions chosen at run
    // time (its header says why it is C).
    .target(name: "CArrayScan"),
    .target(
      name: "JSON", dependencies: ["CArrayScan"],
      swiftSettings: strict + crossModule),
    .target(
      name: "StateKit", dependencies: ["JSON"],
      swiftSettings: strict + crossModule),
    .target(name: "StateKitTesting", dependencies: ["StateKit", "JSON"], swiftSettings: strict),
    .target(
      name: "StateServer",
      dependencies: ["StateKit", "CSQLite", "CSignals", "CPosix"],
      swiftSettings: strict),
    .target(name: "Features", dependencies: ["StateKit"], swiftSettings: strict),
    // Benchmarks and cross-language checks of the JSON layer (bench/json, bench/patch, tests/).
    .executableTarget(
      name: "json-tool", dependencies: ["JSON", "CJansson"], swiftSettings: strict),
    // The StateKit benchmark (bench/statekit): per-action cost of send + reduce + publish.
    .executableTarget(
      name: "statekit-bench", dependencies: ["StateKit", "JSON"], swiftSettings: strict),
    .executableTarget(
      name: "stateserver", dependencies: ["StateServer", "Features", "CStartupSignals"],
      swiftSettings: strict),
    .testTarget(
      name: "JSONTests", dependencies: ["JSON", "CJansson"], swiftSettings: strict),
    .testTarget(
      name: "StateKitTests", dependencies: ["StateKit", "StateKitTesting"], swiftSettings: strict),
    .testTarget(
      name: "StateServerTests", dependencies: ["StateServer", "StateKitTesting"],
      swiftSettings: strict),
    .testTarget(
      // StateServer: the tests `replay --emit swift` wrote (Recorded/) serve the features
      // through its ServerTestHarness.
      name: "FeaturesTests", dependencies: ["Features", "StateKitTesting", "StateServer"],
      swiftSettings: strict),
  ]
)

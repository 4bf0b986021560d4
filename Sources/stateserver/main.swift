// The stateserver executable: the server's command line and the reference features.
import Features
import Foundation
import StateServer

/// The server's options plus the simulated backend's.
struct Options: Sendable {
  var server = ServerOptions()
  var seed = Backend.defaultSeed
  var latencyMs = 50
  var failRate = 0.0
}

let flags =
  ServerOptions.flags.map { $0.lifted(\Options.server) } + [
    Flag<Options>("--seed", value: "N", help: "seed of the simulated backend's failures") {
      (options, value) throws(UsageError) in
      guard let seed = UInt64(value) else {
        throw UsageError("option '--seed' expects a non-negative integer, got '\(value)'")
      }
      options.seed = seed
    },
    Flag<Options>("--latency", value: "MS", help: "simulated backend latency (default 50)") {
      (options, value) throws(UsageError) in
      options.latencyMs = try FlagValue.integer(value, of: "--latency")
    },
    Flag<Options>("--fail-rate", value: "P", help: "share of backend calls that fail, 0 to 1") {
      (options, value) throws(UsageError) in
      guard let rate = Double(value), (0...1).contains(rate) else {
        throw UsageError("option '--fail-rate' expects a number from 0 to 1, got '\(value)'")
      }
      options.failRate = rate
    },
  ]

let interface = CommandLineInterface(
  name: "stateserver", version: Server.version,
  summary: """
    stateserver: a headless application core speaking JSON-RPC 2.0 (NDJSON) on stdio.
    Typed bindings of its features: stateserver codegen --lang typescript|python --out DIR
    """,
  flags: flags)

// `stateserver codegen --lang typescript|python --out DIR`: the features' typed bindings.
if CommandLine.arguments.dropFirst().first == "codegen" {
  let clock = ContinuousClock()
  let features = Features.all(backend: Backend(latencyMs: 0, clock: clock), clock: clock)
  exit(Codegen.run(Array(CommandLine.arguments.dropFirst(2)), features: features))
}

// `stateserver replay FILE`: replays a recording made with `--record` against these features.
if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "replay" {
  guard CommandLine.arguments.count == 3 else {
    FileHandle.standardError.write(Data("usage: stateserver replay FILE\n".utf8))
    exit(2)
  }
  let clock = ContinuousClock()
  let backend = Backend(seed: Backend.defaultSeed, latencyMs: 0, failRate: 0, clock: clock)
  exit(
    Replay.run(
      path: CommandLine.arguments[2], features: Features.all(backend: backend, clock: clock)))
}

// `stateserver attach PATH` is a bridge to a running core, not a server of its own.
if CommandLine.arguments.dropFirst().first == "attach" {
  exit(AttachBridge.run(Array(CommandLine.arguments.dropFirst(2))))
}

switch interface.parse(CommandLine.arguments.dropFirst(), into: Options()) {
case .print(let text):
  FileHandle.standardOutput.write(Data(text.utf8))
  exit(0)
case .usageError(let message):
  FileHandle.standardError.write(Data(message.utf8))
  exit(2)
case .run(let options):
  let clock = ContinuousClock()
  let backend = Backend(
    seed: options.seed, latencyMs: options.latencyMs, failRate: options.failRate, clock: clock)
  // --ephemeral: no persistence at all, so nothing is read or written on disk.
  let stateDirectory =
    options.server.ephemeral
    ? nil : (options.server.stateDirectory ?? Persistence.defaultDirectory())
  let features = Features.all(backend: backend, clock: clock)
  let schemaVersions = Dictionary(
    features.map { ($0.name, $0.schemaVersion) }, uniquingKeysWith: { first, _ in first })
  let log = options.server.log
  let server = Server(
    features: features, options: options.server,
    persistence: {
      stateDirectory.map {
        Persistence(
          stateDirectory: $0, schemaVersions: schemaVersions, warn: { log.warning($0) })
      }
    })
  exit(await server.run())
}

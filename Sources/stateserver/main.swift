// The stateserver executable: the server's command line and the reference features.
import CStartupSignals
import Features
import FoundationEssentials
import StateServer

#if canImport(Glibc)
  import Glibc
#endif

/// The server's options plus the simulated backend's.
struct Options: Sendable {
  var server = ServerOptions()
  var seed = Backend.defaultSeed
  var latencyMs = 50
  var failRate = 0.0
  var usersTimeToLive = UsersFeature.defaultTimeToLive
}

// SIGTERM, SIGINT and SIGHUP have been blocked since the first instruction (the module's
// .preinit_array entry); referencing it keeps the linker from dropping it.
_ = cstartupsignals_linked()

let flags =
  ServerOptions.flags.map { $0.lifted(\Options.server) } + [
    Flag<Options>("--seed", value: "N", help: "seed of the simulated backend's failures") {
      (options, value) throws(UsageError) in
      guard let seed = UInt64(value) else {
        throw UsageError("option '--seed' expects a non-negative integer, got '\(value)'")
      }
      options.seed = seed
    },
    // Up to a day: tests hold requests in flight with latencies past what `setLatency` allows.
    Flag<Options>(
      "--latency", value: "MS", help: "simulated backend latency, 0 to 86400000 (default 50)"
    ) {
      (options, value) throws(UsageError) in
      options.latencyMs = try FlagValue.integer(value, of: "--latency", in: 0...86_400_000)
    },
    Flag<Options>("--fail-rate", value: "P", help: "share of backend calls that fail, 0 to 1") {
      (options, value) throws(UsageError) in
      guard let rate = Double(value), (0...1).contains(rate) else {
        throw UsageError("option '--fail-rate' expects a number from 0 to 1, got '\(value)'")
      }
      options.failRate = rate
    },
    Flag<Options>(
      "--users-ttl", value: "SECONDS",
      help: "how long a loaded users list stays fresh (default 300)"
    ) { (options, value) throws(UsageError) in
      options.usersTimeToLive = try FlagValue.seconds(value, of: "--users-ttl")
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

// `stateserver attach PATH` is a bridge to a running core, not a server of its own.
if CommandLine.arguments.dropFirst().first == "attach" {
  exit(AttachBridge.run(Array(CommandLine.arguments.dropFirst(2))))
}

// `stateserver replay FILE`: replays a recording made with `--record` against these features.
if CommandLine.arguments.count > 1 && CommandLine.arguments[1] == "replay" {
  guard CommandLine.arguments.count == 3 else {
    StandardStream.writeAll("usage: stateserver replay FILE\n", to: 2)
    exit(2)
  }
  let clock = ContinuousClock()
  let backend = Backend(seed: Backend.defaultSeed, latencyMs: 0, failRate: 0, clock: clock)
  exit(
    Replay.run(
      path: CommandLine.arguments[2], features: Features.all(backend: backend, clock: clock)))
}

switch interface.parse(CommandLine.arguments.dropFirst(), into: Options()) {
case .print(let text):
  StandardStream.writeAll(text, to: 1)
  exit(0)
case .usageError(let message):
  StandardStream.writeAll(message, to: 2)
  exit(2)
case .run(let options):
  let clock = ContinuousClock()
  let backend = Backend(
    seed: options.seed, latencyMs: options.latencyMs, failRate: options.failRate, clock: clock)
  // --ephemeral: no persistence at all, so nothing is read or written on disk.
  let stateDirectory =
    options.server.ephemeral
    ? nil : (options.server.stateDirectory ?? Persistence.defaultDirectory())
  // One server per state directory: a second would overwrite the first one's acknowledged
  // changes. Held until the process ends; any other failure to lock is left to persistence,
  // which falls back to memory with a warning.
  var lock: DirectoryLock?
  if let stateDirectory {
    do {
      lock = try DirectoryLock(directory: stateDirectory)
    } catch  where error.isHeld {
      StandardStream.writeAll("stateserver: \(error.description)\n", to: 2)
      exit(2)
    } catch {
      options.server.log.warning(error.description)
    }
  }
  let features = Features.all(
    backend: backend, clock: clock, usersTimeToLive: options.usersTimeToLive)
  let schemaVersions = Dictionary(
    features.map { ($0.name, $0.schemaVersion) }, uniquingKeysWith: { first, _ in first })
  let log = options.server.log
  let server = Server(
    features: features, options: options.server,
    persistence: {
      stateDirectory.map {
        Persistence(
          stateDirectory: $0, schemaVersions: schemaVersions, warn: { log.warning($0) },
          inform: { log.info($0) })
      }
    })
  // The main thread reads stdin and runs the main actor itself: no thread hand-off per request.
  // The directory lock is held until the process exits.
  withExtendedLifetime(lock) { server.runOnMainThread() }
}

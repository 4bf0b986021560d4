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

// The reference app's own flags, after the server's in `--help`.
let flags = [
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

// The server's command line, its subcommands (`codegen`, `attach`, `replay`) and persistence
// come from the entry point every application uses; the backend's flags are this one's own.
Server.main(
  name: "stateserver", version: Server.version,
  summary: """
    stateserver: a headless application core speaking JSON-RPC 2.0 (NDJSON) on stdio.
    Typed bindings of its features: stateserver codegen --lang typescript|python --out DIR
    """,
  options: Options(), server: \.server, flags: flags
) { options in
  let clock = options.server.clock
  let backend = Backend(
    seed: options.seed, latencyMs: options.latencyMs, failRate: options.failRate, clock: clock)
  return Features.all(backend: backend, clock: clock, usersTimeToLive: options.usersTimeToLive)
}

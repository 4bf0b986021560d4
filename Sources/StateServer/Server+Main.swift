import CPosix
import StateKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension Server {
  /// A server executable of one's own in one call: the whole command line (`--help`,
  /// `--version`, `--ephemeral`, `--state-dir`, logging, `--history`, `--record`, `--listen`;
  /// an unknown flag exits 2), the subcommands `codegen`, `replay` and `attach`, persistence
  /// under `$XDG_STATE_HOME/NAME`, and `name`/`version` in `initialize` and `rpc.discover`.
  ///
  /// ```swift
  /// // Sources/timers/main.swift
  /// import StateServer
  /// Server.main(name: "timers", version: "1.0.0", features: [Timers().descriptor()])
  /// ```
  ///
  /// Serves on the main thread (``runOnMainThread(input:output:)``) and never returns. Call it
  /// from the executable's top-level code: the main thread becomes the thread that runs
  /// ``StateActor`` (its stores, reducers and effects' continuations) and waits for stdin.
  public static func main(
    name: String, version: String, summary: String? = nil, features: [FeatureDescriptor]
  ) -> Never {
    main(
      name: name, version: version, summary: summary, options: ServerOptions(), server: \.self,
      features: { _ in features })
  }

  /// ``main(name:version:summary:features:)`` with flags of the application's own: `options`
  /// holds the server's options at `server`, `flags` come after the server's in `--help`, and
  /// `features` builds the features from the options parsed. `codegen` and `replay` build them
  /// from the defaults. Like ``main(name:version:summary:features:)``, the calling (main)
  /// thread takes ``StateActor`` over first.
  public static func main<Options: Sendable>(
    name: String, version: String, summary: String? = nil, options: Options,
    server: WritableKeyPath<Options, ServerOptions> & Sendable, flags: [Flag<Options>] = [],
    features: (Options) -> [FeatureDescriptor]
  ) -> Never {
    // One allocator pool for every thread, before any starts: see the declaration's comment.
    cposix_use_one_allocator_arena()
    StateExecutor.shared.takeOver()
    // `assumeIsolated` runs its closure right here, on this thread, before `main` returns (it
    // never does): `features` is neither sent to another thread nor kept, so the compiler's
    // "sending" check, which cannot see that, is switched off for it alone.
    nonisolated(unsafe) let features = features
    return StateActor.assumeIsolated {
      perform(
        launch(
          name: name, version: version, summary: summary, options: options, server: server,
          flags: flags, arguments: Array(CommandLine.arguments.dropFirst()), features: features))
    }
  }

  /// Not generic, and kept apart: Swift 6.3.1's optimizer crashed (JumpThreadSimplifyCFG) on
  /// this switch inlined into a specialization of the generic `main` in a release build.
  @StateActor @inline(never)
  private static func perform(_ launch: Launch) -> Never {
    switch launch {
    case .exit(let status): exit(status)
    // The state directory's lock is held until the process exits.
    case .serve(let server, let lock): withExtendedLifetime(lock) { server.runOnMainThread() }
    }
  }

  /// What ``main(name:version:summary:options:server:flags:features:)`` does with arguments.
  public enum Launch: Sendable {
    /// The arguments were answered (help, version, a usage error, a subcommand): exit.
    case exit(Int32)
    /// Serve with this server, holding the state directory's lock (nil: `--ephemeral`, or a
    /// lock file that could not be used, which persistence then reports).
    case serve(Server, DirectoryLock?)
  }

  /// Reads `arguments` (without the program name): runs a subcommand, prints help, version or
  /// a usage error (status 2), or returns the server to run. Separate from `main` so tests can
  /// see what a command line does.
  @StateActor
  public static func launch<Options: Sendable>(
    name: String, version: String, summary: String? = nil, options defaults: Options,
    server part: WritableKeyPath<Options, ServerOptions> & Sendable, flags: [Flag<Options>] = [],
    arguments: [String], features: (Options) -> [FeatureDescriptor]
  ) -> Launch {
    switch arguments.first {
    case "codegen":
      return .exit(Codegen.run(Array(arguments.dropFirst()), features: features(defaults)))
    case "attach":
      return .exit(AttachBridge.run(Array(arguments.dropFirst())))
    case "replay":
      return .exit(
        replay(Array(arguments.dropFirst()), name: name, version: version) {
          features(defaults)
        })
    default: break
    }
    let interface = commandLine(
      name: name, version: version, summary: summary, server: part, flags: flags)
    switch interface.parse(arguments, into: defaults) {
    case .print(let text):
      StandardStream.writeAll(text, to: 1)
      return .exit(0)
    case .usageError(let message):
      StandardStream.writeAll(message, to: 2)
      return .exit(2)
    case .run(let parsed):
      var options = parsed[keyPath: part]
      options.name = name
      options.version = version
      let features = features(parsed)
      if let refusal = Server.refusal(of: features) {
        StandardStream.writeAll("\(name): \(refusal)\n", to: 2)
        return .exit(1)
      }
      // --ephemeral: no persistence at all, so nothing is read or written on disk.
      let stateDirectory =
        options.ephemeral
        ? nil
        : (options.stateDirectory ?? Persistence.defaultDirectory(application: name))
      // One server per state directory: a second would overwrite the first one's acknowledged
      // changes. Any other failure to lock is left to persistence, which falls back to memory
      // with a warning.
      var lock: DirectoryLock?
      if let stateDirectory {
        do {
          lock = try DirectoryLock(directory: stateDirectory)
        } catch  where error.isHeld {
          StandardStream.writeAll("\(name): \(error.description)\n", to: 2)
          return .exit(2)
        } catch {
          options.log.warning(error.description)
        }
      }
      let schemaVersions = Dictionary(
        features.map { ($0.name, $0.schemaVersion) }, uniquingKeysWith: { first, _ in first })
      let log = options.log
      return .serve(
        Server(
          features: features, options: options,
          persistence: {
            stateDirectory.map {
              Persistence(
                stateDirectory: $0, schemaVersions: schemaVersions, warn: { log.warning($0) },
                inform: { log.info($0) })
            }
          }), lock)
    }
  }

  /// The application's command line: the server's flags (lifted into `Options`), then its own.
  static func commandLine<Options>(
    name: String, version: String, summary: String?,
    server part: WritableKeyPath<Options, ServerOptions> & Sendable, flags: [Flag<Options>]
  ) -> CommandLineInterface<Options> {
    CommandLineInterface(
      name: name, version: version,
      summary: summary
        ?? """
        \(name) \(version): a headless application core speaking JSON-RPC 2.0 (NDJSON) on stdio.
        Also: \(name) codegen --lang typescript|python --out DIR, \
        \(name) replay [--emit pytest] [--out FILE] FILE, \(name) attach PATH
        """,
      flags: allFlags(named: name, server: part, then: flags))
  }

  /// The server's flags lifted into `Options`, then the application's. Built with `append`,
  /// not `map` and `+`: those, generic over an element type not specialized here, resolve
  /// associated types at run time, at every start-up (docs/architecture.md, "Nothing built at
  /// start that a later request can build").
  private static func allFlags<Options>(
    named name: String, server part: WritableKeyPath<Options, ServerOptions> & Sendable,
    then own: [Flag<Options>]
  ) -> [Flag<Options>] {
    var all: [Flag<Options>] = []
    all.reserveCapacity(ServerOptions.flags.count + own.count)
    for flag in ServerOptions.flags {
      var flag = flag.lifted(part)
      // The server's help names the reference executable; an application names itself (the
      // reference executable itself has nothing to rename: no scan of every flag's help).
      if name != "stateserver" { flag.help = renaming(flag.help, to: name) }
      all.append(flag)
    }
    for flag in own { all.append(flag) }
    return all
  }

  /// `help` with each "`stateserver " naming `name` instead. By hand: the standard library's
  /// `replacing` runs string-processing generics that every start-up would pay for a text
  /// only `--help` prints.
  static func renaming(_ help: String, to name: String) -> String {
    let marker = Array("`stateserver ".utf8)
    let bytes = Array(help.utf8)
    var result: [UInt8] = []
    var start = 0
    var index = 0
    while index + marker.count <= bytes.count {
      if bytes[index] == marker[0], bytes[index..<index + marker.count].elementsEqual(marker) {
        result += bytes[start..<index]
        result += Array("`\(name) ".utf8)
        index += marker.count
        start = index
      } else {
        index += 1
      }
    }
    guard start > 0 else { return help }
    result += bytes[start...]
    return String(decoding: result, as: UTF8.self)
  }
}

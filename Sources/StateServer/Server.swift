import Dispatch
import Foundation
import JSON
import StateKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The stateserver runtime: serves PROTOCOL.md on stdin/stdout for the given features until the
/// input ends, `shutdown` arrives or SIGTERM/SIGINT, then exits 0 after draining.
///
/// Three threads meet through two queues: a reader thread splits and parses stdin (``Inbox``),
/// the main actor reduces actions and builds replies (``Connection``), a writer thread encodes
/// and writes stdout (``OutputQueue``).
///
/// ```swift
/// let server = Server(features: [Counter().descriptor()], options: ServerOptions())
/// exit(await server.run())
/// ```
public struct Server: Sendable {
  /// The version `--version` and `initialize` report.
  public static let version = "0.1.0"

  public var features: [FeatureDescriptor]
  public var options: ServerOptions
  public var persistence: (@MainActor @Sendable () -> (any StorePersistence)?)

  /// `persistence` is made on the main actor when the server starts (nil: nothing persists).
  public init(
    features: [FeatureDescriptor], options: ServerOptions,
    persistence: @escaping @MainActor @Sendable () -> (any StorePersistence)? = { nil }
  ) {
    self.features = features
    self.options = options
    self.persistence = persistence
  }

  /// Runs until shutdown and returns the process's exit status.
  @MainActor
  public func run(input: Int32 = 0, output: Int32 = 1) async -> Int32 {
    // A client that closes our stdout must not kill us mid-drain: write(2) reports EPIPE.
    signal(SIGPIPE, SIG_IGN)
    let log = options.log
    // StateKit's diagnostics (a view that does not encode, an uncaught effect error) join the
    // log: its format, its level, and its queue that never blocks on an unread stderr.
    Diagnostics.route { log.error($0) }
    if isatty(input) == 1 {
      Log.writeStandardError(
        Array(
          ("stateserver \(Self.version): type JSON-RPC requests, one per line, e.g. "
            + #"{"jsonrpc":"2.0","id":1,"method":"store/list"}; Ctrl-D to quit"# + "\n").utf8))
    }
    let queue = OutputQueue(maxMessages: options.maxQueuedMessages)
    let registry = StoreRegistry(features: features, persistence: persistence())
    let connection = Connection(registry: registry, output: queue, options: options, log: log)
    if let path = options.recordPath {
      switch Recorder.start(
        path: path, features: features, historyLimit: options.historyLimit, log: log)
      {
      case .success(let recorder): connection.recorder = recorder
      case .failure(let error):
        log.error("cannot record", ["reason": error.data?["reason"]?.stringValue ?? ""])
        Log.flush()
        return 2
      }
    }
    let hub = Hub(registry: registry, options: options, log: log)
    hub.add(owner: connection)
    let listener: Listener?
    do {
      listener = try options.listen.map { address throws(UnixSocket.Failure) in
        try Listener(path: try address.resolve(), log: log)
      }
    } catch {
      Log.writeStandardError(Array("stateserver: \(error.message)\n".utf8))
      return 2
    }
    do {
      try registry.openDefaultStores()
    } catch {
      log.error("cannot open the default stores", ["reason": error.message])
      Log.flush()
      return 1
    }
    for store in registry.openStores { connection.attach(store) }
    let inbox = Inbox(capacity: 1024) {
      Task { @MainActor in connection.drainInbox() }
    }
    connection.inbox = inbox
    StdoutWriter(fd: output, queue: queue, log: log).start()
    let signals = [SIGTERM, SIGINT].map { number in
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: .main)
      source.setEventHandler {
        MainActor.assumeIsolated {
          if connection.phase == .serving {
            log.info("signal received; draining", ["signal": String(number)])
            // Served like end of input: the lines already read are answered first.
            inbox.finish()
          } else {
            log.warning("second signal; exiting without draining", ["signal": String(number)])
            Log.flush()
            exit(128 + number)
          }
        }
      }
      return source
    }
    // Read nothing before both sources are registered. libdispatch registers a signal source
    // later, on its manager thread; until then the disposition is SIG_IGN, and on Linux the
    // signal goes to the main thread (parked in sigsuspend with every signal unblocked once the
    // main queue runs elsewhere), which drops it: a SIGINT sent right after the first reply was
    // lost about one time in ten, and the server never shut down. Once registered, libdispatch's
    // own handler forwards a signal caught by any thread to its signalfd.
    for source in signals {
      await withCheckedContinuation { (registered: CheckedContinuation<Void, Never>) in
        source.setRegistrationHandler { registered.resume() }
        source.resume()
      }
    }
    LineReader(fd: input, maxMessageBytes: options.maxMessageBytes, inbox: inbox, output: queue)
      .start()
    listener?.start { fd in Task { @MainActor in hub.accept(fd) } }
    let status = await connection.finished()
    connection.recorder?.finish()
    // The owner drained; attached clients hear their stores closed, then the process exits.
    listener?.stop()
    await hub.closeAttached()
    for source in signals { source.cancel() }
    Log.flush()
    return status
  }
}

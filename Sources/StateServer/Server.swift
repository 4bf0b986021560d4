import FoundationEssentials
import JSON
import StateKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The stateserver runtime: serves the protocol (docs/protocol.md) on stdin/stdout for the given
/// features until the input ends, `shutdown` arrives, stdout closes or SIGTERM/SIGINT/SIGHUP,
/// then exits 0 after draining.
///
/// Stages in order: a reader splits and parses stdin (``LineFramer``; on a thread of its own
/// behind the ``Inbox`` in library use, on the main thread in the executable's ``MainLoop``),
/// the state actor routes each line, reduces actions and builds replies (``Connection``), and
/// the output is written (``OutputQueue``, a writer thread once output queues up). Another
/// thread turns signals into calls on the state actor (``ShutdownSignals``). Output is bounded in
/// bytes, not lines: past the budget the reader and the state actor wait for the writer.
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
  public var persistence: (@StateActor @Sendable () -> (any StorePersistence)?)

  /// `persistence` is made on the state actor when the server starts (nil: nothing persists).
  public init(
    features: [FeatureDescriptor], options: ServerOptions,
    persistence: @escaping @StateActor @Sendable () -> (any StorePersistence)? = { nil }
  ) {
    self.features = features
    self.options = options
    self.persistence = persistence
  }

  /// Serves on the calling thread, which must be the process's main thread (top-level code),
  /// and never returns: the process exits with the status ``run(input:output:)`` would return.
  ///
  /// The calling thread takes ``StateActor`` over (``StateExecutor``), then reads stdin and
  /// runs the actor's jobs itself (``MainLoop``): a request and its answer cost no thread
  /// hand-off. Use it from an executable's `main.swift` instead of `exit(await server.run())`.
  public func runOnMainThread(input: Int32 = 0, output: Int32 = 1) -> Never {
    final class Slot {
      var loop: MainLoop?
    }
    StateExecutor.shared.takeOver()
    return StateActor.assumeIsolated {
      let slot = Slot()
      Task { @StateActor in
        exit(await run(input: input, output: output) { slot.loop = $0 })
      }
      MainLoop.run(input: input) { slot.loop }
    }
  }

  /// Runs until shutdown and returns the process's exit status.
  @StateActor
  public func run(input: Int32 = 0, output: Int32 = 1) async -> Int32 {
    await run(input: input, output: output, onMainLoop: nil)
  }

  /// `onMainLoop`: when given, stdin is read by the main loop it receives, not by a thread.
  @StateActor
  private func run(
    input: Int32, output: Int32, onMainLoop: (@StateActor (MainLoop) -> Void)?
  ) async -> Int32 {
    // A client that closes our stdout must not kill us mid-drain: write(2) reports EPIPE.
    signal(SIGPIPE, SIG_IGN)
    // First, before anything can take time: a signal from here on is never lost.
    let signals = ShutdownSignals.install()
    let log = options.log
    // StateKit's diagnostics (a view that does not encode, an uncaught effect error) join the
    // log: its format, its level, and its queue that never blocks on an unread stderr.
    Diagnostics.route { log.error($0) }
    if let refusal = Server.refusal(of: features) {
      log.error(refusal)
      Log.flush()
      return 1
    }
    if isatty(input) == 1 {
      Log.writeStandardError(
        Array(
          ("\(options.name) \(options.version): type JSON-RPC requests, one per line, e.g. "
            + #"{"jsonrpc":"2.0","id":1,"method":"store/list"}; Ctrl-D to quit"# + "\n").utf8))
    }
    let queue = OutputQueue(
      maxMessages: options.maxQueuedMessages, maxBytes: options.maxQueuedOutputBytes)
    let registry = StoreRegistry(features: features, persistence: persistence())
    let connection = Connection(registry: registry, output: queue, options: options, log: log)
    let hub = Hub(registry: registry, options: options, log: log)
    hub.add(owner: connection)
    if let path = options.recordPath {
      switch Recorder.start(
        path: path, application: RecordedApplication(name: options.name, version: options.version),
        features: features, historyLimit: options.historyLimit, clock: options.clock,
        log: log)
      {
      case .success(let recorder): connection.recorder = recorder
      case .failure(let error):
        log.error("cannot record", ["reason": error.data?["reason"]?.stringValue ?? ""])
        Log.flush()
        return 2
      }
    }
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
    // A deferred default store (StoreRegistry) is attached when a request opens it.
    registry.onOpen = { connection.attach($0) }
    registry.onFailure = { id, error in
      log.error("cannot open the default store \(id)", ["reason": error.message])
    }
    connection.unreadInput = {
      var count: Int32 = 0
      return ioctl(input, UInt(FIONREAD), &count) == 0 ? Int(count) : 0
    }
    let writer = StdoutWriter(fd: output, queue: queue, log: log) { code in
      log.error("stdout failed; the remaining output is discarded", ["errno": String(code)])
      Task { @StateActor in connection.beginShutdown(reason: "stdout closed") }
    }
    connection.buffer.writeDirectly = { writer.writeDirectly($0, estimatedBytes: $1) }
    // The signal and writer threads start in the state actor's next job, after the input already
    // waiting is answered: the first answer on a pipe is written directly, and creating two
    // threads first delayed it. Nothing is lost meanwhile: a signal waits in its pipe and
    // output in the queue until their thread takes them, as they would if it were busy.
    Task { @StateActor in
      signals?.start { number in
        Task { @StateActor in connection.received(signal: number) }
      }
      writer.start()
    }
    if let onMainLoop {
      let loop = MainLoop(
        input: input, maxMessageBytes: options.maxMessageBytes, connection: connection)
      connection.inputOffset = { loop.offset }
      onMainLoop(loop)
    } else {
      let inbox = Inbox(capacity: 1024, maxBytes: options.maxQueuedInputBytes) {
        Task { @StateActor in connection.drainInbox() }
      }
      connection.inbox = inbox
      connection.inputOffset = { inbox.readOffset }
      LineReader(fd: input, maxMessageBytes: options.maxMessageBytes, inbox: inbox, output: queue)
        .start()
    }
    listener?.start { fd in Task { @StateActor in hub.accept(fd) } }
    let status = await connection.finished()
    // The owner drained; attached clients hear their stores closed, then the process exits.
    listener?.stop()
    await hub.closeAttached()
    connection.recorder?.finish()
    Log.flush()
    return status
  }
}

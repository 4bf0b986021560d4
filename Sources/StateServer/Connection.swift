import JSON
import StateKit

/// The protocol engine of one client: turns input lines into calls on stores and stores'
/// publications into output lines, in the order docs/protocol.md promises.
///
/// Everything here runs on the state actor, where the stores live, so a whole input batch is
/// served without a task hop: parse (already done by the reader), validate the envelope, route,
/// `send` to a store (whose observer queues the patch and events synchronously), queue the
/// response. The lines of a batch are committed to the writer together at its end.
@StateActor
final class Connection {
  /// What a method produced: a result now, or a reply resolved later.
  enum Outcome {
    /// `barriers`: stores whose queued patches must not be merged across this response,
    /// because it carries their state.
    case result(JSON, barriers: [String] = [])
    /// A result written as text while it is sent (`Connection.stateResult`).
    case written(WrittenResult)
    /// `{store, version}`, the result of a `dispatch`.
    case dispatched(store: String, version: UInt64)
    case later(PendingReply)
  }

  let registry: StoreRegistry
  let options: ServerOptions
  let log: Log
  let output: OutputQueue
  var inbox: Inbox?
  /// `--record`: where every store's history goes (Connection+History.swift); the owner's,
  /// shared with every attached connection.
  var recorder: Recorder?
  /// The lines of this turn, held patches and the commit that hands them to `output`.
  let buffer: OutputBuffer
  /// Lines taken from the inbox and not served yet: the output went over its budget first.
  var held: ArraySlice<InboundLine> = []
  /// The input offset that `held` reaches.
  var heldOffset = 0
  /// A task waits for the output to have room again (``wantsInput``).
  var waitingForRoom = false
  /// Every line that began before this input offset has been served.
  var servedOffset = 0
  /// Bytes written to stdin and not read yet (`FIONREAD`); 0 when unknown.
  var unreadInput: @Sendable () -> Int = { 0 }
  /// Bytes of input read so far (the inbox's, or the main loop's).
  var inputOffset: @StateActor () -> Int = { 0 }
  /// Serving, draining or stopped, with what the end needs (Connection+Shutdown.swift).
  var lifecycle = Lifecycle.start
  /// Opens when the connection stops (``finished()``).
  let ended = Gate()
  /// What this client watches, and what publications become for it.
  let fanout: Fanout
  /// Envelopes, the method table, and the replies answered later.
  let router = Router()
  /// What this client speaks, and the work whose progress it hears (Connection+Progress.swift).
  var progress = ProgressRoutes()
  /// The stdio client owns the process; an attached one ends alone (Connection+Attached).
  var role = Role.owner
  /// Every connection, when the server runs with more than one client possible (`--listen`).
  weak var hub: Hub?

  init(registry: StoreRegistry, output: OutputQueue, options: ServerOptions, log: Log) {
    self.registry = registry
    self.fanout = Fanout(registry: registry)
    self.output = output
    self.buffer = OutputBuffer(registry: registry, queue: output, log: log)
    self.options = options
    self.log = log
  }

  // Input (its reading and pacing) is in Connection+Input.swift; each line goes to the router.

  // MARK: The hot path: dispatch

  func dispatch(_ params: DispatchParams, id: JSON?) throws(RPCError) -> Outcome {
    let storeID = params.store
    let action = params.action
    guard case .object = action else {
      throw .invalidParams(
        pointer: "/action",
        reason:
          #"expected an object (an action such as {"type": "increment"}), got "#
          + action.kindDescription)
    }
    let wait = params.wait ?? .reduced
    let progressToken = try Self.progressToken(params.progressToken)
    guard let store = registry.store(storeID) else { throw .unknownStore(storeID) }
    let transaction: Transaction
    do {
      // The store's observer queues the patch and events before `send` returns, so they are
      // written before the response queued below.
      transaction = try store.send(wire: action, cause: storeCause(id))
    } catch {
      switch error {
      case .refused(let type, let reason):
        throw .actionRefused(type: type, reason: reason, in: action)
      case .invalid(let pointer, let reason):
        throw .invalidParams(pointer: "/action" + pointer, reason: reason)
      }
    }
    if let progressToken { watchProgress(of: store, transaction, token: progressToken, id: id) }
    guard wait == .settled, let id else {
      return .dispatched(store: storeID, version: store.version)
    }
    let reply = PendingReply(id: id)
    reply.work = Task { @StateActor [weak reply] in
      await store.settled(transaction)
      reply?.succeed(["store": .string(storeID), "version": .integer(Int64(store.version))])
    }
    return .later(reply)
  }

  // MARK: Output

  /// Queues what a store's publication becomes for this client (``Fanout``); called
  /// synchronously by the store while it reduces, so a dispatch's patch and events are queued
  /// before its response.
  ///
  /// `store` is the publishing store, asked for only when a subscription to a path needs its
  /// state (``Fanout/lines(for:of:cause:patch:event:)``).
  func publish(_ publication: Publication, of store: () -> any AnyStore) {
    if publication.to != publication.from || publication.statePatch?.isEmpty == false,
      role == .owner, registry.isPersistent(publication.store)
    {
      // Once per publication: every connection hears it, the owner records it.
      registry.persistence?.record(publication)
    }
    fanout.lines(
      for: publication, of: store, cause: clientCause(publication.cause),
      patch: { notice in buffer.add(patch: consume notice) },
      event: { line in buffer.add(consume line) })
    if !buffer.isHolding { buffer.commit() }
  }

  /// `publish` of a publication that leaves `held` to the state (`HeldValue`): its patches that
  /// carry one are written while they are sent (``OutputBuffer/stream(_:held:)``). The store's
  /// `holdingObserver`, apart from `publish`, which every publication takes.
  func publishHolding(
    _ publication: Publication, _ held: [HeldValue], of store: () -> any AnyStore
  ) {
    if role == .owner, registry.isPersistent(publication.store) {
      registry.persistence?.record(publication)
    }
    fanout.linesHolding(
      for: publication, held, of: store, cause: clientCause(publication.cause),
      patch: { notice, held in
        if let held { buffer.stream(notice, held: held) } else { buffer.add(patch: consume notice) }
      },
      event: { line in buffer.add(consume line) })
    if !buffer.isHolding { buffer.commit() }
  }

  func emit(_ line: consuming Outgoing) {
    buffer.emit(consume line)
  }

  /// Hands what was queued on (``OutputBuffer/commit()``); returns whether the output is now
  /// over its budget.
  @discardableResult
  func commit() -> Bool {
    buffer.commit()
  }

  // MARK: Helpers for the methods

  /// Watches a new store: its publications go to `publish`.
  func attach(_ store: any AnyStore) {
    startHistory(of: store)
    if let hub { return hub.attach(store) }
    // Unowned, not weak (this runs once per reduced action), and unchecked: the store owns the
    // closure, so it is alive whenever the closure runs, and the connection lives as long as
    // the process.
    store.observer = { [unowned(unsafe) self, unowned(unsafe) store] publication in
      self.publish(publication, of: { store })
    }
    store.holdingObserver = { [unowned(unsafe) self, unowned(unsafe) store] publication, held in
      self.publishHolding(publication, held, of: { store })
    }
    fanout.opened(store)
  }

  static func notification(_ method: String, _ params: JSON) -> JSON {
    ["jsonrpc": "2.0", "method": .string(method), "params": params]
  }

  static func summary(_ store: any AnyStore) -> JSON {
    [
      "store": .string(store.id), "feature": .string(store.featureName),
      "version": .integer(Int64(store.version)),
    ]
  }
}

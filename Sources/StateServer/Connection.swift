import JSON
import StateKit

/// The protocol engine of one client: turns input lines into calls on stores and stores'
/// publications into output lines, in the order PROTOCOL.md promises.
///
/// Everything here runs on the main actor, where the stores live, so a whole input batch is
/// served without a task hop: parse (already done by the reader), validate the envelope, route,
/// `send` to a store (whose observer queues the patch and events synchronously), queue the
/// response. The lines of a batch are committed to the writer together at its end.
@MainActor
final class Connection {
  enum Phase {
    case serving
    /// Shutdown began: new requests are refused with -32010 while effects finish.
    case draining
  }

  /// What a method produced: a result now, or a reply resolved later.
  enum Outcome {
    /// `barriers`: stores whose queued patches must not be merged across this response,
    /// because it carries their state.
    case result(JSON, barriers: [String] = [])
    /// `{store, version}`, the result of a `dispatch`.
    case dispatched(store: String, version: UInt64)
    case later(PendingReply)
  }

  /// What a message gets back: a line now, or a reply resolved later.
  enum Served {
    case now(Outgoing)
    case later(PendingReply)
  }

  let registry: StoreRegistry
  let options: ServerOptions
  let log: Log
  let output: OutputQueue
  var inbox: Inbox?
  /// `--record`: where every store's history goes (Connection+History.swift).
  var recorder: Recorder?
  var uncommitted: [Outgoing] = []
  /// While set, lines wait in `uncommitted` (an input batch of this client, or of another
  /// client through the hub).
  var inBatch = false
  /// Set by the hub while another client's batch is served and this client is behind: its
  /// patches merge as they are queued, since its queue would merge them all anyway.
  var mergesHeldPatches = false
  /// The newest patch queued while `mergesHeldPatches`, kept apart so later ones merge into it
  /// in place (Connection+Held).
  var held: HeldPatch?
  var phase = Phase.serving
  /// `initialize`'s `subscribe`: whether every store is watched at its root automatically.
  var subscribesToAll = true
  var subscriptions: [String: [Subscription]] = [:]
  /// Requests answered later, by id, so `$/cancelRequest` can find them.
  var pending: [JSON: [PendingReply]] = [:]
  var shutdownReplies: [PendingReply] = []
  var stopped: CheckedContinuation<Int32, Never>?
  var exitCode: Int32?
  /// The stdio client owns the process; an attached one ends alone (Connection+Attached).
  var role = Role.owner
  /// Every connection, when the server runs with more than one client possible (`--listen`).
  weak var hub: Hub?

  init(registry: StoreRegistry, output: OutputQueue, options: ServerOptions, log: Log) {
    self.registry = registry
    self.output = output
    self.options = options
    self.log = log
  }

  // MARK: Input

  /// Serves what the reader queued; called once per wake-up of the inbox, and again until it
  /// comes back empty.
  func drainInbox() {
    guard let inbox else { return }
    let lines = inbox.take()
    guard !lines.isEmpty else { return }
    receive(lines)
    Task { @MainActor in self.drainInbox() }
  }

  func receive(_ lines: [InboundLine]) {
    hub?.holdCommits(except: self)
    inBatch = true
    for line in lines { receive(line) }
    inBatch = false
    commit()
    hub?.commitHeld(except: self)
  }

  private func receive(_ line: InboundLine) {
    switch line {
    case .message(.array(let elements)):
      receiveBatch(elements)
    case .message(let message):
      switch serve(message) {
      case .none: break
      case .some(.now(let line)): emit(line)
      case .some(.later(let reply)): reply.onResolve = { [weak self] in self?.emit($0) }
      }
    case .malformed(let error):
      let refusal: RPCError =
        error.kind == .duplicateKey ? .duplicateKey(error) : .parseError(error)
      emit(.failure(id: .null, error: refusal))
    case .oversize(let bytes):
      emit(
        .failure(id: .null, error: .messageTooLarge(size: bytes, limit: options.maxMessageBytes)))
    case .endOfInput:
      beginShutdown(reason: "end of input")
    }
  }

  /// A JSON-RPC batch: one array of responses once every request in it is answered; no line at
  /// all when it held only notifications.
  private func receiveBatch(_ elements: [JSON]) {
    guard !elements.isEmpty else {
      emit(.failure(id: .null, error: .invalidRequest("an empty batch; send at least one request")))
      return
    }
    let batch = BatchReply()
    for element in elements {
      switch serve(element) {
      case .none: break
      case .some(.now(let line)):
        batch.responses.append(line.json)
        batch.barriers += line.barriers
      case .some(.later(let reply)):
        let slot = batch.responses.count
        batch.responses.append(.null)
        batch.waiting += 1
        reply.onResolve = { [weak self] response in
          batch.responses[slot] = response.json
          batch.waiting -= 1
          if batch.waiting == 0 {
            self?.emit(.message(.array(batch.responses), barriers: batch.barriers))
          }
        }
      }
    }
    if !batch.responses.isEmpty && batch.waiting == 0 {
      emit(.message(.array(batch.responses), barriers: batch.barriers))
    }
  }

  /// Validates one message's envelope and calls its method. Returns the response (nil for a
  /// notification); a response given as `.later` is written when its reply resolves.
  private func serve(_ message: JSON) -> Served? {
    guard case .object(let request) = message else {
      let reason = "expected a request object, got \(message.kindDescription)"
      return .now(.failure(id: .null, error: .invalidRequest(reason)))
    }
    let id = request["id"]
    switch id {
    case nil, .string?, .integer?, .double?, .null?: break
    case let other?:
      let reason = "\"id\" must be a string, a number or null, got \(other.kindDescription)"
      return .now(.failure(id: .null, error: .invalidRequest(reason)))
    }
    guard request["jsonrpc"] == "2.0" else {
      let reason = "\"jsonrpc\" must be \"2.0\""
      return .now(.failure(id: id ?? .null, error: .invalidRequest(reason)))
    }
    guard case .string(let method)? = request["method"] else {
      let reason = "\"method\" must be a string naming the method"
      return .now(.failure(id: id ?? .null, error: .invalidRequest(reason)))
    }
    switch request["params"] {
    case nil, .object?, .array?: break
    case let other?:
      let reason = "\"params\" must be an object or an array, got \(other.kindDescription)"
      return .now(.failure(id: id ?? .null, error: .invalidRequest(reason)))
    }
    do {
      let outcome = try call(method, params: request["params"], id: id)
      guard let id else {
        if case .later(let reply) = outcome { reply.onResolve = nil }
        return nil
      }
      switch outcome {
      case .result(let result, let barriers):
        return .now(.response(id: id, result: result, barriers: barriers))
      case .dispatched(let store, let version):
        return .now(.dispatched(id: id, store: store, version: version))
      case .later(let reply):
        pending[id, default: []].append(reply)
        reply.onFinish = { [weak self] in self?.forgetResolved(id) }
        return .later(reply)
      }
    } catch {
      guard let id else {
        // JSON-RPC forbids answering a notification; the person running the server still hears.
        log.warning(
          "notification failed",
          [
            "method": method, "code": String(error.code), "error": error.message,
            "reason": error.data?["reason"]?.stringValue ?? "",
          ])
        return nil
      }
      return .now(.failure(id: id, error: error))
    }
  }

  /// Every method `call` routes.
  static let methods: Set<String> = [
    "dispatch", "state/get", "state/subscribe", "state/unsubscribe", "store/open", "store/close",
    "store/list", "features/list", "initialize", "rpc.discover", "$/cancelRequest", "shutdown",
    "history/get", "store/rewind",
  ]

  /// Routes a method; every method's params are validated before anything changes.
  private func call(_ method: String, params: JSON?, id: JSON?) throws(RPCError) -> Outcome {
    // Route before reading params: an unknown method is -32601 whatever its params look like
    // (JSON-RPC's own example calls an unknown `subtract` with array params).
    guard Self.methods.contains(method) else { throw .methodNotFound(method) }
    let params = try Params(params)
    if phase == .draining && method != "$/cancelRequest" && method != "shutdown" {
      throw .shuttingDown
    }
    switch method {
    case "dispatch": return try dispatch(params, id: id)
    case "state/get": return try getStateAt(params)
    case "state/subscribe": return try subscribe(params)
    case "state/unsubscribe": return try unsubscribe(params)
    case "store/open": return try openStore(params)
    case "store/close": return try closeStore(params)
    case "store/list":
      return .result(
        [
          "stores": .array(registry.openStores.map(Self.summary)),
          "attachedClients": attachedClients,
        ])
    case "features/list": return .result(["features": .array(registry.features.map(Self.describe))])
    case "initialize": return try initialize(params)
    case "rpc.discover": return .result(OpenRPC.document(features: registry.features))
    case "$/cancelRequest": return try cancel(params)
    case "shutdown": return shutdown(id: id)
    case "history/get": return try getHistory(params)
    case "store/rewind": return try rewindStore(params, id: id)
    default: throw .methodNotFound(method)
    }
  }

  // MARK: The hot path: dispatch

  private func dispatch(_ params: Params, id: JSON?) throws(RPCError) -> Outcome {
    let storeID = try params.string("store", "the id of an open store")
    let action = try params.object("action", #"an action such as {"type": "increment"}"#)
    let wait = try params.optionalChoice("wait", ["reduced", "settled"]) ?? "reduced"
    guard let store = registry.store(storeID) else { throw .unknownStore(storeID) }
    let transaction: Transaction
    do {
      // The store's observer queues the patch and events before `send` returns, so they are
      // written before the response queued below.
      transaction = try store.send(wire: action, cause: storeCause(id))
    } catch {
      switch error {
      case .refused(let type, let reason): throw .actionRefused(type: type, reason: reason)
      case .invalid(let pointer, let reason):
        throw .invalidParams(pointer: "/action" + pointer, reason: reason)
      }
    }
    guard wait == "settled", let id else {
      return .dispatched(store: storeID, version: store.version)
    }
    let reply = PendingReply(id: id)
    reply.work = Task { @MainActor [weak reply] in
      await store.settled(transaction)
      reply?.succeed(["store": .string(storeID), "version": .integer(Int64(store.version))])
    }
    return .later(reply)
  }

  // MARK: Output

  /// Queues a store's publication for every subscription to it, and its events whatever the
  /// subscriptions; called synchronously by the store while it reduces.
  ///
  /// Subscriptions (and `initialize {subscribe: "none"}`) choose which *state* a client
  /// mirrors. Events are one-off and never replayed, and PROTOCOL.md promises a dispatch's events
  /// before its response: a client that subscribed to nothing still gets every `store/event`.
  func publish(_ publication: Publication, of store: any AnyStore) {
    let changed = publication.to != publication.from
    if changed, role == .owner, registry.isPersistent(publication.store) {
      registry.persistence?.changed(storeID: publication.store)
    }
    let watching = subscriptions[publication.store] ?? []
    guard !watching.isEmpty || !publication.events.isEmpty else { return }
    if changed {
      let cause = clientCause(publication.cause)
      for subscription in watching {
        let operations: [JSON]
        if subscription.path.isRoot {
          operations = publication.patch
        } else {
          operations = Self.scope(
            publication.patch, to: subscription.path, in: store.published,
            existedBefore: subscription.exists)
          subscription.exists = subscription.path.value(in: store.published) != nil
        }
        guard !operations.isEmpty else { continue }
        if mergesHeldPatches {
          hold(
            store: publication.store, path: subscription.pathText, from: subscription.version,
            to: publication.to, operations: operations, cause: cause)
        } else {
          uncommitted.append(
            .patch(
              PatchNotice(
                store: publication.store, path: subscription.pathText,
                from: subscription.version, to: publication.to, operations: operations,
                cause: cause)))
        }
        subscription.version = publication.to
      }
    }
    if !publication.events.isEmpty { releaseHeld() }
    for event in publication.events {
      let params: JSON = ["store": .string(publication.store), "event": event]
      uncommitted.append(
        .message(Self.notification("store/event", params), barriers: [publication.store]))
    }
    if !inBatch { commit() }
  }

  func emit(_ line: Outgoing) {
    releaseHeld()
    uncommitted.append(line)
    if !inBatch { commit() }
  }

  /// Hands what was queued to the writer: at the end of each input batch, and at once for
  /// output produced outside one (effects, replies resolved later).
  func commit() {
    releaseHeld()
    guard !uncommitted.isEmpty else { return }
    let lines = uncommitted
    uncommitted = []  // the queue keeps the buffer; the next batch starts a new one
    output.append(lines) { compact(&$0) }
  }

  /// Replaces a merged patch's operations by the subscribed value itself once they outweigh it,
  /// so a stalled client costs at most about one copy of each state it watches.
  ///
  /// The queue calls it only for a patch that is still the newest of its subscription: the
  /// subtree has not changed since the patch's `to` (a root patch's `to` is the store's version;
  /// a path's subtree may have stayed equal while other parts moved on).
  private func compact(_ notice: inout PatchNotice) {
    guard let weight = notice.weight, weight >= 2 * max(notice.checkedWeight, 8),
      let store = registry.store(notice.store),
      let path = try? JSONPointer(parsing: notice.path),
      let value = path.value(in: store.published),
      !path.isRoot || store.version == notice.to
    else { return }
    notice.checkedWeight = weight
    let size = nodeCount(value, limit: weight)
    guard size < weight else { return }
    // The subscribed value itself, as the one operation a subscriber to `path` would get for
    // a change of the whole subtree (`add` under an object, `replace` of an array element).
    let whole = JSONPatch([.replace(path: path, value: value)]).scoped(
      to: path, in: store.published)
    notice.operations =
      whole?.operations.map(\.json) ?? [["op": "replace", "path": "", "value": value]]
    notice.weight = size
    notice.checkedWeight = size
  }

  // MARK: Helpers for the methods

  func forgetResolved(_ id: JSON) {
    pending[id]?.removeAll { $0.isResolved }
    if pending[id]?.isEmpty == true { pending[id] = nil }
  }

  func pendingReplies(for id: JSON) -> [PendingReply] {
    forgetResolved(id)
    return pending[id] ?? []
  }

  /// Watches a new store: its publications go to `publish`.
  func attach(_ store: any AnyStore) {
    if let hub {
      hub.attach(store)
      // History belongs to the store, whichever client opened it: the owner's options and
      // recorder (merging history and attach, the hub's early return had skipped this).
      (hub.connections.first ?? self).startHistory(of: store)
      return
    }
    // Unowned, not weak (this runs once per reduced action): the store owns the closure, so
    // it is alive whenever the closure runs, and the connection lives as long as the process.
    store.observer = { [unowned self, unowned store] publication in
      self.publish(publication, of: store)
    }
    if subscribesToAll {
      subscriptions[store.id] = [Subscription(path: .root, version: store.version)]
    }
    startHistory(of: store)
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

/// The responses of one batch, written as one array when the last of them is ready.
@MainActor
private final class BatchReply {
  var responses: [JSON] = []
  var barriers: [String] = []
  var waiting = 0
}

import JSON
import StateKit

/// The protocol engine of one client: turns input lines into calls on stores and stores'
/// publications into output lines, in the order docs/protocol.md promises.
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
  /// The shutdown signals received so far (a second one exits at once).
  var signalsReceived = 0
  /// A signal's shutdown begins once the input written before it is served (this offset).
  var shutdownOffset: Int?
  /// Bytes written to stdin and not read yet (`FIONREAD`); 0 when unknown.
  var unreadInput: @Sendable () -> Int = { 0 }
  /// Bytes of input read so far (the inbox's, or the main loop's).
  var inputOffset: @MainActor () -> Int = { 0 }
  var phase = Phase.serving
  /// What this client watches, and what publications become for it.
  let fanout: Fanout
  /// Requests answered later, by id, so `$/cancelRequest` can find them.
  var pending: [JSON: [PendingReply]] = [:]
  var shutdownReplies: [PendingReply] = []
  var stopped: CheckedContinuation<Int32, Never>?
  var exitCode: Int32?
  /// The stdio client owns the process; an attached one ends alone (Connection+Attached).
  var role = Role.owner
  /// Every connection, when the server runs with more than one client possible (`--listen`).
  weak var hub: Hub?
  /// The method called last: a pipelining client calls one method many times over, and
  /// comparing its name costs less than hashing it.
  private var lastMethod: RPCMethod?

  init(registry: StoreRegistry, output: OutputQueue, options: ServerOptions, log: Log) {
    self.registry = registry
    self.fanout = Fanout(registry: registry)
    self.output = output
    self.buffer = OutputBuffer(registry: registry, queue: output, log: log)
    self.options = options
    self.log = log
  }

  // MARK: Input (the reading and pacing are in Connection+Input.swift)

  func receive(_ line: InboundLine) {
    switch line {
    case .request(let request):
      answer(serve(request.method, params: request.params, id: request.id))
    case .message(let message):
      receive(message, refusals: [])
    case .malformed(let error):
      // Well-formed text with refused members (a repeated key, a number out of range) is still
      // answered request by request, each with its own id when that id is readable.
      if let remainder = error.remainder {
        receive(remainder, refusals: error.refusals)
        return
      }
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

  /// One parsed line: a message or a batch. `refusals` are the members of the line the parser
  /// refused, pointed at from the line's root.
  private func receive(_ message: JSON, refusals: [JSONParseError.Refusal]) {
    if case .array(let elements) = message, !refusals.contains(where: { $0.pointer.isRoot }) {
      receiveBatch(elements, refusals: refusals)
      return
    }
    answer(serve(message, refusals: refusals))
  }

  /// Writes what serving a message gave: its response now or once its reply resolves, or
  /// nothing for a notification.
  private func answer(_ served: Served?) {
    switch served {
    case .none: break
    case .some(.now(let line)): emit(line)
    case .some(.later(let reply)): reply.onResolve = { [weak self] in self?.emit($0) }
    }
  }

  /// A JSON-RPC batch: one array of responses once every request in it is answered; no line at
  /// all when it held only notifications.
  private func receiveBatch(_ elements: [JSON], refusals: [JSONParseError.Refusal]) {
    guard !elements.isEmpty else {
      emit(.failure(id: .null, error: .invalidRequest("an empty batch; send at least one request")))
      return
    }
    // Each element's refusals, pointed at from the element (rare: only when the parser refused
    // members of the line).
    var refusalsByElement: [Int: [JSONParseError.Refusal]] = [:]
    for refusal in refusals {
      guard let first = refusal.pointer.tokens.first, let index = Int(first) else { continue }
      var own = refusal
      own.pointer = JSONPointer(tokens: Array(refusal.pointer.tokens.dropFirst()))
      refusalsByElement[index, default: []].append(own)
    }
    let batch = BatchReply()
    for (index, element) in elements.enumerated() {
      switch serve(element, refusals: refusalsByElement[index] ?? []) {
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
  ///
  /// `refusals`: members the parser refused (pointed at from the message), answered with the
  /// message's id whenever the id itself is not one of them. One in the envelope makes the
  /// request invalid; one inside `params` is refused like a bad param, silently for a
  /// notification.
  private func serve(_ message: JSON, refusals: [JSONParseError.Refusal] = []) -> Served? {
    if case .object(let request) = message { return serve(request: request, refusals: refusals) }
    if let refusal = Self.envelopeRefusal(refusals) {
      return .now(.failure(id: .null, error: .refusedMember(refusal)))
    }
    let reason = "expected a request object, got \(message.kindDescription)"
    return .now(.failure(id: .null, error: .invalidRequest(reason)))
  }

  /// A refused member that makes the whole message unanswerable by id: the root or the id.
  private static func envelopeRefusal(_ refusals: [JSONParseError.Refusal])
    -> JSONParseError.Refusal?
  {
    refusals.first(where: { $0.pointer.isRoot || $0.pointer.tokens == ["id"] })
  }

  /// ``serve(_:refusals:)`` of a request object. A function of its own: the object is then a
  /// parameter, read where it lies, where bound inside the caller it was retained and released.
  private func serve(request: JSONObject, refusals: [JSONParseError.Refusal]) -> Served? {
    if let refusal = Self.envelopeRefusal(refusals) {
      return .now(.failure(id: .null, error: .refusedMember(refusal)))
    }
    // Only what is passed on is copied out (the id, the params); `jsonrpc` and `method` are
    // read in place: copying their values out retained and released each one's string box.
    let id = request["id"]
    switch id {
    case nil, .string?, .integer?, .double?, .null?: break
    case let other?:
      let reason = "\"id\" must be a string, a number or null, got \(other.kindDescription)"
      return .now(.failure(id: .null, error: .invalidRequest(reason)))
    }
    if let refusal = refusals.first(where: { !Self.isInParams($0.pointer) }) {
      return .now(.failure(id: id ?? .null, error: .refusedMember(refusal)))
    }
    // Compared as a string: the literal as a `JSON` would be a boxed string allocated per request.
    guard request.hasString("2.0", forKey: "jsonrpc") else {
      let reason = "\"jsonrpc\" must be \"2.0\""
      return .now(.failure(id: id ?? .null, error: .invalidRequest(reason)))
    }
    guard let method = request.string(forKey: "method") else {
      let reason = "\"method\" must be a string naming the method"
      return .now(.failure(id: id ?? .null, error: .invalidRequest(reason)))
    }
    let params = request["params"]
    switch params {
    case nil, .object?, .array?: break
    case let other?:
      let reason = "\"params\" must be an object or an array, got \(other.kindDescription)"
      return .now(.failure(id: id ?? .null, error: .invalidRequest(reason)))
    }
    return serve(method, params: params, id: id, refusedParam: refusals.first)
  }

  /// Calls a request's method once its envelope is valid, and gives what it answers: nil for
  /// a notification. `refusedParam`: a member inside the params the parser refused.
  private func serve(
    _ method: String, params: JSON?, id: JSON?, refusedParam: JSONParseError.Refusal? = nil
  ) -> Served? {
    do throws(RPCError) {
      if let refusal = refusedParam { throw .refusedParam(refusal) }
      let outcome = try call(method, params: params, id: id)
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
        return .later(remember(reply, id: id))
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

  /// Keeps a reply answered later by its id, for `$/cancelRequest`. A function of its own: the
  /// closure that captures `id` made `serve` allocate a box for the id of every request.
  private func remember(_ reply: PendingReply, id: JSON) -> PendingReply {
    pending[id, default: []].append(reply)
    reply.onFinish = { [weak self] in self?.forgetResolved(id) }
    return reply
  }

  /// Whether a refused member lies inside `params` (not `params` itself).
  private static func isInParams(_ pointer: JSONPointer) -> Bool {
    pointer.tokens.count >= 2 && pointer.tokens[0] == "params"
  }

  /// Routes a method through ``methods``; every method's params are decoded and validated
  /// before anything changes.
  private func call(_ name: String, params: JSON?, id: JSON?) throws(RPCError) -> Outcome {
    // The hot path, a pipelined `dispatch` with the usual params, is served without the method
    // table: its closures' contexts and the method object were retained and released per
    // request. Anything else (a drain, a closed output, unusual params) takes the table's route,
    // whose `dispatch` reads the params the same way first.
    if name == "dispatch", phase == .serving, !output.isBroken {
      // A `switch`, not `if case`: the optional pattern of `if case` copied the object out.
      switch params {
      case .some(.object(let object)):
        if let outcome = try dispatch(direct: object, id: id) { return outcome }
      default: break
      }
    }
    // Route before reading params: an unknown method is -32601 whatever its params look like
    // (JSON-RPC's own example calls an unknown `subtract` with array params).
    let method: RPCMethod
    if let lastMethod, lastMethod.name == name {
      method = lastMethod
    } else {
      guard let found = Self.methodsByName[name] else { throw .methodNotFound(name) }
      method = found
      lastMethod = found
    }
    if phase == .serving && output.isBroken {
      // Nobody reads our answers any more: the client is gone, so change nothing more.
      beginShutdown(reason: "stdout closed")
    }
    if phase == .draining && !method.servedWhileDraining {
      // Malformed params still get their -32602 first, as before the drain.
      _ = try RPCMethod.decode(NoParams.self, from: params)
      throw .shuttingDown
    }
    return try method.call(self, params, id)
  }

  // MARK: The hot path: dispatch

  /// `dispatch` with the usual params, read in place; nil for anything else.
  private func dispatch(direct params: JSONObject, id: JSON?) throws(RPCError) -> Outcome? {
    guard let params = DispatchParams(direct: params) else { return nil }
    return try dispatch(params, id: id)
  }

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
    guard wait == .settled, let id else {
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

  func emit(_ line: consuming Outgoing) {
    buffer.emit(line)
  }

  /// Hands what was queued on (``OutputBuffer/commit()``); returns whether the output is now
  /// over its budget.
  @discardableResult
  func commit() -> Bool {
    buffer.commit()
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
    startHistory(of: store)
    if let hub { return hub.attach(store) }
    // Unowned, not weak (this runs once per reduced action), and unchecked: the store owns the
    // closure, so it is alive whenever the closure runs, and the connection lives as long as
    // the process.
    store.observer = { [unowned(unsafe) self, unowned(unsafe) store] publication in
      self.publish(publication, of: { store })
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

/// The responses of one batch, written as one array when the last of them is ready.
@MainActor
private final class BatchReply {
  var responses: [JSON] = []
  var barriers: [String] = []
  var waiting = 0
}

import JSON
import StateKit

/// Routes one client's input lines to their methods: checks each envelope (`jsonrpc`, `id`,
/// `method`, `params`, members the parser refused), answers a batch as one array, looks the
/// method up in the method table (``Connection/methods``), applies the draining rule, and keeps
/// the replies answered later by id for `$/cancelRequest`.
///
/// The methods themselves are the connection's (Connection+Methods.swift and the table), so
/// every function here takes the connection it routes for as a parameter: borrowed for the
/// call, where a stored back reference would be retained and released on every request.
@StateActor
final class Router {
  /// What a message gets back: a line now, or a reply resolved later.
  enum Served {
    case now(Outgoing)
    case later(PendingReply)
    /// A result written while it is sent, once everything before it is committed.
    case streamed(id: JSON, WrittenResult)
  }

  /// Requests answered later, by id, so `$/cancelRequest` can find them.
  private var pending: [JSON: [PendingReply]] = [:]
  /// The method called last: a pipelining client calls one method many times over, and
  /// comparing its name costs less than hashing it.
  private var lastMethod: RPCMethod?

  /// Serves one input line: a request, a message or batch, or what the reader refused.
  ///
  /// Inlined into the input loop (``Connection/serve(_:)``), so the line is read where it lies
  /// in the batch: called, it was copied out first, a retain and a release of its values per
  /// line.
  @inline(__always)
  func receive(_ line: InboundLine, on connection: Connection) {
    switch line {
    case .request(let request):
      answer(
        serve(request.method, params: request.params, id: request.id, on: connection),
        on: connection)
    case .openFromText(let request, let text):
      receive(owned: request, text: text, on: connection)
    case .message(let message):
      receive(message, refusals: [], on: connection)
    case .malformed(let error):
      // Well-formed text with refused members (a repeated key, a number out of range) is still
      // answered request by request, each with its own id when that id is readable.
      if let remainder = error.remainder {
        receive(remainder, refusals: error.refusals, on: connection)
        return
      }
      let refusal: RPCError =
        error.kind == .duplicateKey ? .duplicateKey(error) : .parseError(error)
      connection.emit(.failure(id: .null, error: refusal))
    case .oversize(let bytes, let id):
      connection.emit(
        .failure(
          id: id ?? .null,
          error: .messageTooLarge(size: bytes, limit: connection.options.maxMessageBytes)))
    case .endOfInput:
      connection.beginShutdown(reason: "end of input")
    }
  }

  /// One parsed line: a message or a batch. `refusals` are the members of the line the parser
  /// refused, pointed at from the line's root.
  private func receive(
    _ message: JSON, refusals: [JSONParseError.Refusal], on connection: Connection
  ) {
    if case .array(let elements) = message, !refusals.contains(where: { $0.pointer.isRoot }) {
      receiveBatch(elements, refusals: refusals, on: connection)
      return
    }
    answer(serve(message, refusals: refusals, on: connection), on: connection)
  }

  /// Writes what serving a message gave: its response now or once its reply resolves, or
  /// nothing for a notification.
  private func answer(_ served: Served?, on connection: Connection) {
    switch served {
    case .none: break
    case .some(.now(let line)): connection.emit(line)
    case .some(.later(let reply)): reply.onResolve = { [weak connection] in connection?.emit($0) }
    case .some(.streamed(let id, let result)): connection.stream(result, id: id)
    }
  }

  /// Validates one message's envelope and calls its method. Returns the response (nil for a
  /// notification); a response given as `.later` is written when its reply resolves.
  ///
  /// `refusals`: members the parser refused (pointed at from the message), answered with the
  /// message's id whenever the id itself is not one of them. One in the envelope makes the
  /// request invalid; one inside `params` is refused like a bad param, silently for a
  /// notification.
  func serve(
    _ message: JSON, refusals: [JSONParseError.Refusal], on connection: Connection
  ) -> Served? {
    if case .object(let request) = message {
      return serve(request: request, refusals: refusals, on: connection)
    }
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
  private func serve(
    request: JSONObject, refusals: [JSONParseError.Refusal], on connection: Connection
  ) -> Served? {
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
    return serve(method, params: params, id: id, refusedParam: refusals.first, on: connection)
  }

  /// Serves a request that is no longer in its line (``Connection/serve(_:)`` moved it out):
  /// its params are then passed down owned, so a `store/open`'s parsed state is freed once the
  /// store has decoded it, not after the open (docs/architecture.md, "The open at scale").
  func receive(owned request: consuming RequestEnvelope, on connection: Connection) {
    let method = request.method
    let id = request.id
    let params = (consume request).params
    answer(serve(method, params: consume params, id: id, on: connection), on: connection)
  }

  /// A `store/open` whose large arrays are left as `text`, read by the store's decode while it
  /// runs. When an array's text turns out not to be JSON, whatever the open did before it
  /// found out is dropped and the line is answered as its whole parse is (a parse error, or
  /// the refusal of a member): so it is answered exactly as it would be had it been parsed
  /// whole first.
  func receive(owned request: RequestEnvelope, text: DeferredArrays, on connection: Connection) {
    let served = DeferredArrays.$current.withValue(text) {
      serve(request.method, params: request.params, id: request.id, on: connection)
    }
    guard text.isWellFormed() else {
      receive(LineFramer.parsedWhole(text.bytes), on: connection)
      return
    }
    answer(served, on: connection)
  }

  /// Calls a request's method once its envelope is valid, and gives what it answers: nil for
  /// a notification. `refusedParam`: a member inside the params the parser refused.
  private func serve(
    _ method: String, params: consuming JSON?, id: JSON?,
    refusedParam: JSONParseError.Refusal? = nil,
    on connection: Connection
  ) -> Served? {
    do throws(RPCError) {
      if let refusal = refusedParam { throw .refusedParam(refusal) }
      let outcome = try call(method, params: consume params, id: id, on: connection)
      guard let id else {
        if case .later(let reply) = outcome { reply.onResolve = nil }
        return nil
      }
      switch outcome {
      case .result(let result, let barriers):
        return .now(.response(id: id, result: result, barriers: barriers))
      case .written(let result):
        return .streamed(id: id, result)
      case .dispatched(let store, let version):
        return .now(.dispatched(id: id, store: store, version: version))
      case .later(let reply):
        return .later(remember(reply, id: id))
      }
    } catch {
      guard let id else {
        // JSON-RPC forbids answering a notification; the person running the server still hears.
        connection.log.warning(
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

  /// Routes a method through ``Connection/methods``; every method's params are decoded and validated
  /// before anything changes.
  private func call(
    _ name: String, params: consuming JSON?, id: JSON?, on connection: Connection
  ) throws(RPCError) -> Connection.Outcome {
    // The hot path, a pipelined `dispatch` with the usual params, is served without the method
    // table: its closures' contexts and the method object were retained and released per
    // request. Anything else (a drain, a closed output, unusual params) takes the table's route,
    // whose `dispatch` reads the params the same way first.
    if name == "dispatch", connection.lifecycle.isServing, !connection.output.isBroken {
      // A `switch`, not `if case`: the optional pattern of `if case` copied the object out.
      switch params {
      case .some(.object(let object)):
        if let outcome = try dispatch(direct: object, id: id, on: connection) { return outcome }
      default: break
      }
    }
    // Route before reading params: an unknown method is -32601 whatever its params look like
    // (JSON-RPC's own example calls an unknown `subtract` with array params).
    let method: RPCMethod
    if let lastMethod, lastMethod.name == name {
      method = lastMethod
    } else {
      guard let found = Connection.methodsByName[name] else { throw .methodNotFound(name) }
      method = found
      lastMethod = found
    }
    if connection.lifecycle.isServing && connection.output.isBroken {
      // Nobody reads our answers any more: the client is gone, so change nothing more.
      connection.beginShutdown(reason: "stdout closed")
    }
    // Stopped counts as draining: the reader keeps reading for as long as the process lives.
    if !connection.lifecycle.isServing && !method.servedWhileDraining {
      // Malformed params still get their -32602 first, as before the drain.
      _ = try RPCMethod.decode(NoParams.self, from: params)
      throw .shuttingDown
    }
    return try method.call(connection, consume params, id)
  }

  /// `dispatch` with the usual params, read in place; nil for anything else.
  private func dispatch(direct params: JSONObject, id: JSON?, on connection: Connection)
    throws(RPCError) -> Connection.Outcome?
  {
    guard let params = DispatchParams(direct: params) else { return nil }
    return try connection.dispatch(params, id: id)
  }

  // MARK: Replies answered later

  /// Every reply not resolved yet (a shutdown answers or refuses them).
  var unresolved: [PendingReply] {
    pending.values.flatMap { $0 }.filter { !$0.isResolved }
  }

  func forgetResolved(_ id: JSON) {
    pending[id]?.removeAll { $0.isResolved }
    if pending[id]?.isEmpty == true { pending[id] = nil }
  }

  func pendingReplies(for id: JSON) -> [PendingReply] {
    forgetResolved(id)
    return pending[id] ?? []
  }

  /// Forgets every reply (an attached connection that ended).
  func forgetAll() {
    pending = [:]
  }
}

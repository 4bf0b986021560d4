import JSON

/// A JSON-RPC error the client receives: a code from docs/protocol.md, a message for a person and
/// `data` saying what was wrong and what would have been right.
///
/// ```swift
/// throw RPCError.invalidParams(pointer: "/action/quantity", reason: "expected an integer")
/// ```
public struct RPCError: Error, Sendable, Equatable {
  /// One of the codes below (docs/protocol.md, Errors).
  public var code: Int
  /// A short fixed text for the code.
  public var message: String
  /// What was wrong: `reason` always, `pointer` for invalid params, `line`/`column`/`position`
  /// for a parse error.
  public var data: JSON?

  /// An error with `code`, `message` and optional `data`.
  public init(code: Int, message: String, data: JSON? = nil) {
    self.code = code
    self.message = message
    self.data = data
  }

  /// The `error` member of a response.
  public var json: JSON {
    var object: JSONObject = ["code": .integer(Int64(code)), "message": .string(message)]
    if let data { object["data"] = data }
    return .object(object)
  }
}

/// The codes of docs/protocol.md: JSON-RPC's standard ones, then the server's.
extension RPCError {
  /// The line is not JSON.
  public static let parseErrorCode = -32700
  /// Not a JSON-RPC request; also a line over the size limit, a duplicate key, an empty batch.
  public static let invalidRequestCode = -32600
  /// No such method.
  public static let methodNotFoundCode = -32601
  /// A param (or an action field) is missing, mistyped or refused by validation.
  public static let invalidParamsCode = -32602
  /// The server failed; the request may not have been carried out.
  public static let internalErrorCode = -32603
  /// No open store has that id.
  public static let unknownStoreCode = -32001
  /// No registered feature has that name.
  public static let unknownFeatureCode = -32002
  /// An unknown action type, or an internal one only the core may send.
  public static let actionRefusedCode = -32003
  /// `store/open` with an id already in use.
  public static let storeExistsCode = -32004
  /// `history/skip` of an action history can no longer recompute (`data.oldest`).
  public static let notRecomputableCode = -32005
  /// The server is draining and takes no new requests.
  public static let shuttingDownCode = -32010
  /// Answered by `$/cancelRequest` before it completed.
  public static let cancelledCode = -32800

  /// A line that is not JSON: `data` locates the problem for the person who wrote it.
  static func parseError(_ error: JSONParseError) -> RPCError {
    RPCError(
      code: parseErrorCode, message: "Parse error",
      data: [
        "line": .integer(Int64(error.line)), "column": .integer(Int64(error.column)),
        "position": .integer(Int64(error.position)), "reason": .string(error.reason),
      ])
  }

  /// Well-formed JSON with a repeated key: which value was meant is ambiguous, so the request
  /// is refused rather than guessed at.
  static func duplicateKey(_ error: JSONParseError) -> RPCError {
    RPCError(
      code: invalidRequestCode, message: "Invalid Request: duplicate key",
      data: [
        "line": .integer(Int64(error.line)), "column": .integer(Int64(error.column)),
        "position": .integer(Int64(error.position)), "reason": .string(error.reason),
      ])
  }

  /// A member of well-formed JSON the parser refused (a repeated key, a number beyond 64-bit
  /// integers or doubles) in a request's envelope; `pointer` is from the request's root.
  static func refusedMember(_ refusal: JSONParseError.Refusal) -> RPCError {
    let what = refusal.kind == .duplicateKey ? "duplicate key" : "number out of range"
    return RPCError(
      code: invalidRequestCode, message: "Invalid Request: \(what)",
      data: ["pointer": .string(refusal.pointer.description), "reason": .string(refusal.reason)])
  }

  /// A refused member inside `params`: a number out of range is an invalid param (pointer from
  /// the params' root, as for every -32602); a repeated key stays an ambiguous request (-32600,
  /// pointer from the request's root).
  static func refusedParam(_ refusal: JSONParseError.Refusal) -> RPCError {
    guard refusal.kind == .numberOutOfRange else { return refusedMember(refusal) }
    let inParams = JSONPointer(tokens: Array(refusal.pointer.tokens.dropFirst()))
    return invalidParams(pointer: inParams.description, reason: refusal.reason)
  }

  static func invalidRequest(_ reason: String) -> RPCError {
    RPCError(
      code: invalidRequestCode, message: "Invalid Request", data: ["reason": .string(reason)])
  }

  static func messageTooLarge(size: Int, limit: Int) -> RPCError {
    RPCError(
      code: invalidRequestCode, message: "Invalid Request: message too large",
      data: [
        "size": .integer(Int64(size)), "limit": .integer(Int64(limit)),
        "reason": .string("the line is \(size) bytes; at most \(limit) are accepted"),
        "hint": .string(
          "start the server with --max-message-bytes N to accept longer lines "
            + "(N up to 1073741824; a 1,000,000-element state is about 170 MB)"),
      ])
  }

  static func methodNotFound(_ method: String) -> RPCError {
    RPCError(
      code: methodNotFoundCode, message: "Method not found",
      data: [
        "method": .string(method),
        "reason": .string("no method '\(method)'; rpc.discover lists the methods"),
      ])
  }

  /// `pointer` names the offending member from the params' root (`/action/quantity`).
  public static func invalidParams(pointer: String, reason: String) -> RPCError {
    RPCError(
      code: invalidParamsCode, message: "Invalid params",
      data: ["pointer": .string(pointer), "reason": .string(reason)])
  }

  static func internalError(_ reason: String) -> RPCError {
    RPCError(code: internalErrorCode, message: "Internal error", data: ["reason": .string(reason)])
  }

  static func unknownStore(_ store: String) -> RPCError {
    RPCError(
      code: unknownStoreCode, message: "Unknown store",
      data: [
        "store": .string(store),
        "reason": .string("no open store '\(store)'; store/list lists them"),
      ])
  }

  static func unknownFeature(_ feature: String) -> RPCError {
    RPCError(
      code: unknownFeatureCode, message: "Unknown feature",
      data: [
        "feature": .string(feature),
        "reason": .string("no feature '\(feature)'; features/list lists them"),
      ])
  }

  /// `pointer`: the refused `type` member, `/action/type`, or deeper for a child feature's action
  /// carried inside a parent's (`/action/action/type`).
  static func actionRefused(type: String, reason: String, pointer: String = "/action/type")
    -> RPCError
  {
    RPCError(
      code: actionRefusedCode, message: "Action refused",
      data: ["pointer": .string(pointer), "type": .string(type), "reason": .string(reason)])
  }

  /// The refusal of `type` inside the wire `action`: pointed at the outermost `type` member
  /// naming it (the action's own, or a child's action inside a parent's).
  static func actionRefused(type: String, reason: String, in action: JSON) -> RPCError {
    func find(_ value: JSON, _ path: JSONPointer) -> JSONPointer? {
      guard case .object(let object) = value else { return nil }
      if object["type"] == .string(type) { return path.appending("type") }
      for (key, member) in object.members where key != "type" {
        if let deeper = find(member, path.appending(key)) { return deeper }
      }
      return nil
    }
    let pointer =
      find(action, JSONPointer(tokens: ["action"])) ?? JSONPointer(tokens: ["action", "type"])
    return actionRefused(type: type, reason: reason, pointer: pointer.description)
  }

  static func storeExists(_ store: String) -> RPCError {
    RPCError(
      code: storeExistsCode, message: "Store already exists",
      data: [
        "store": .string(store),
        "reason": .string("a store '\(store)' is already open; pick another id or omit it"),
      ])
  }

  static let shuttingDown = RPCError(
    code: shuttingDownCode, message: "Shutting down",
    data: ["reason": "the server is draining and accepts no new requests"])

  static let cancelled = RPCError(
    code: cancelledCode, message: "Request cancelled",
    data: ["reason": "cancelled by $/cancelRequest"])
}

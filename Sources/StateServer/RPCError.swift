import JSON

/// A JSON-RPC error the client receives: a code from PROTOCOL.md, a message for a person and
/// `data` saying what was wrong and what would have been right.
///
/// ```swift
/// throw RPCError.invalidParams(pointer: "/action/quantity", reason: "expected an integer")
/// ```
public struct RPCError: Error, Sendable, Equatable {
  public var code: Int
  public var message: String
  public var data: JSON?

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

extension RPCError {
  public static let parseErrorCode = -32700
  public static let invalidRequestCode = -32600
  public static let methodNotFoundCode = -32601
  public static let invalidParamsCode = -32602
  public static let internalErrorCode = -32603
  public static let unknownStoreCode = -32001
  public static let unknownFeatureCode = -32002
  public static let actionRefusedCode = -32003
  public static let storeExistsCode = -32004
  public static let shuttingDownCode = -32010
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

  static func actionRefused(type: String, reason: String) -> RPCError {
    RPCError(
      code: actionRefusedCode, message: "Action refused",
      data: ["pointer": "/action/type", "type": .string(type), "reason": .string(reason)])
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

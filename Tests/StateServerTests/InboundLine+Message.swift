import JSON

@testable import StateServer

extension RequestEnvelope {
  /// The request as a JSON-RPC message: what the whole parse gives, but for the order of the
  /// envelope's members.
  var message: JSON {
    var object: JSONObject = ["jsonrpc": "2.0"]
    if let id { object["id"] = id }
    object["method"] = .string(method)
    if let params { object["params"] = params }
    return .object(object)
  }
}

extension InboundLine {
  /// The message the line holds, as the whole parse gives it; nil for the other cases.
  var message: JSON? {
    switch self {
    case .request(let request): request.message
    case .message(let message): message
    default: nil
    }
  }
}

import JSON

// The params of every method, as the JSON layer's decoder reads them: a member that is missing
// or of the wrong type is a -32602 whose pointer names it. Unknown members are ignored (a newer
// client may send more); only actions refuse them, as their schemas say.

/// Params of a method that takes none; whatever members are sent are ignored.
struct NoParams: Decodable {}

/// `dispatch`.
struct DispatchParams: Decodable {
  var store: String
  /// Checked to be an object by `dispatch`, then decoded by the store's feature.
  var action: JSON
  var wait: Wait?
  /// Where `$/progress` notifications of the action's effects go (a string or an integer,
  /// checked by `dispatch`); heard only by a client that said it speaks progress.
  var progressToken: JSON?
}

extension DispatchParams {
  /// The usual params read directly (``RPCMethod``'s `direct`): the `Codable` decoder was a
  /// sixth of the main thread's time per pipelined `dispatch`. Nil for anything else (a
  /// missing or mistyped member, a null), which the decoder reads and words the error of.
  ///
  /// The strings are read in place and only the action is copied out: copying each member out
  /// retained and released it (atomic operations, most of a request's cost).
  init?(direct object: borrowing JSONObject) {
    guard let store = object.string(forKey: "store"),
      let actionAt = object.position(of: "action")
    else { return nil }
    let action = object.value(at: actionAt)
    if case .null = action { return nil }
    if let waitAt = object.position(of: "wait") {
      guard let name = object.string(at: waitAt), let known = Wait(rawValue: name) else {
        return nil
      }
      wait = known
    } else {
      wait = nil
    }
    progressToken = object.position(of: "progressToken").map { object.value(at: $0) }
    self.store = store
    self.action = action
  }
}

/// When a `dispatch` is answered: once reduced (the default), or once every effect it started
/// has finished. The one place these names are spelled; `initialize` and `rpc.discover` list
/// `allCases`.
enum Wait: String, CaseIterable, ParamChoice {
  case reduced
  case settled
}

/// `state/get`, `state/subscribe`, `state/unsubscribe`.
struct StateParams: Decodable {
  var store: String
  var path: PointerParam?
}

/// `state/get`: `state/subscribe`'s params, and a past `version` while history holds it.
struct StateAtParams: Decodable {
  var store: String
  var path: PointerParam?
  var version: UInt64?

  /// The same params without a version.
  var current: StateParams { StateParams(store: store, path: path) }
}

/// `store/open`.
struct OpenParams: Decodable {
  var feature: String
  var store: String?
  /// A merge patch over the feature's initial state; checked to be an object.
  var state: JSON?
  var persist: Bool?
}

/// `store/close`.
struct CloseParams: Decodable {
  var store: String
}

/// `initialize`.
struct InitializeParams: Decodable {
  /// Checked against ``Connection/protocolVersion``; absent or null means the server's.
  var protocolVersion: JSON?
  /// `{name, version}`, for logs; checked to be an object.
  var client: JSON?
  var subscribe: Subscribe?
  /// `"virtual"`: effects sleep on time that only `clock/advance` moves.
  var clock: ClockChoice?
  /// What the client speaks; the server answers what both do (Connection+Capabilities.swift).
  var capabilities: ClientCapabilities?

  /// Which stores a client watches without asking: every store's root, or none.
  enum Subscribe: String, CaseIterable, ParamChoice {
    case all
    case none
  }
}

/// `$/cancelRequest`.
struct CancelParams: Decodable {
  /// The id of the pending request; any JSON-RPC id, null included.
  var id: JSON
}

/// A string param restricted to a few names; a wrong one is refused with the list of the right
/// ones ("expected \"reduced\" or \"settled\"") rather than Swift's own wording.
protocol ParamChoice: RawRepresentable<String>, CaseIterable, Decodable {}

extension ParamChoice {
  init(from decoder: any Decoder) throws {
    let value = try JSON(from: decoder)
    guard case .string(let text) = value, let choice = Self(rawValue: text) else {
      let list = Self.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: " or ")
      throw JSONDecodingError(
        pointer: JSONDecodingError.pointer(decoder.codingPath),
        reason: "expected \(list), got \(value.description)")
    }
    self = choice
  }

  /// The names, for `rpc.discover` and `initialize`'s capabilities.
  static var names: JSON { .array(allCases.map { .string($0.rawValue) }) }
}

/// An RFC 6901 pointer param (`path`), parsed; a malformed one is refused at its own pointer.
struct PointerParam: Decodable {
  var pointer: JSONPointer

  init(from decoder: any Decoder) throws {
    let here = JSONDecodingError.pointer(decoder.codingPath)
    guard case .string(let text) = try JSON(from: decoder) else {
      throw JSONDecodingError(
        pointer: here, reason: "expected a string (a JSON Pointer such as \"/items/0\")")
    }
    do {
      pointer = try JSONPointer(parsing: text)
    } catch {
      throw JSONDecodingError(pointer: here, reason: error.reason)
    }
  }
}

extension Optional where Wrapped == PointerParam {
  /// The pointer given, or the root.
  var orRoot: JSONPointer { self?.pointer ?? .root }
}

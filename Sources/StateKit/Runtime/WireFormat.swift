import JSON

/// The one transform between the wire shape of actions and events,
/// `{"type": "setQuantity", "id": "sku-7", "quantity": 2}`, and the shape Swift synthesizes
/// for an enum's `Codable`, `{"setQuantity": {"id": "sku-7", "quantity": 2}}`. Every feature
/// gets its wire format from its enums with no hand-written coding.
///
/// A case without payload travels as `{"type": "increment"}`. Label every associated value
/// (`case setQuantity(id: String, quantity: Int)`): an unlabeled one travels as `"_0"`,
/// which clients then have to spell.
public enum WireFormat {
  /// Decodes a wire action. An unknown type, or one not in `allowed` (the feature's public
  /// actions), is `.refused`; a missing or non-string `type` and a field that does not decode
  /// are `.invalid` with the field's pointer relative to the action object (`/quantity`).
  public static func decodeAction<Action: Decodable>(
    _ type: Action.Type, from wire: JSON, allowed: Set<String>? = nil
  ) throws(ActionError) -> Action {
    guard case .object(var fields) = wire else {
      throw .invalid(
        pointer: "", reason: "expected an object with a \"type\", got \(wire.kindDescription)")
    }
    guard let typeValue = fields["type"] else {
      throw .invalid(pointer: "/type", reason: "missing: expected a string naming the action")
    }
    guard case .string(let name) = typeValue else {
      throw .invalid(
        pointer: "/type",
        reason: "expected a string naming the action, got \(typeValue.kindDescription)")
    }
    if let allowed, !allowed.contains(name), !decodingRecorded {
      throw .refused(type: name, reason: "\"\(name)\" is not an action clients may send")
    }
    fields.removeValue(forKey: "type")
    var swiftShape = JSON.object(JSONObject([(name, .object(fields))]))
    var enumPointer = ""
    do {
      // Strict: the published action schemas allow no other member, so a field the action
      // does not have is refused at its pointer rather than ignored.
      return try JSONValueDecoder(refusesUnknownKeys: true).decode(Action.self, from: swiftShape)
    } catch
      where error.pointer.isEmpty && error.refusedType == nil
      && Action.self is any EmbedsInternalActions.Type
    {
      // Not a case of the enum itself: an internal action, flat on the wire, goes in its case.
      // A client's reaches here only when `allowed` let it through (no check, or replay).
      swiftShape = .object(
        JSONObject([(internalCaseName, .object(JSONObject([("_0", swiftShape)])))]))
      enumPointer = "/" + internalCaseName + "/_0"
    } catch {
      throw refusal(error, name: name, enumPointer: enumPointer)
    }
    do {
      return try JSONValueDecoder(refusesUnknownKeys: true).decode(Action.self, from: swiftShape)
    } catch {
      throw refusal(error, name: name, enumPointer: enumPointer)
    }
  }

  /// The `ActionError` of a failure to decode `{name: fields}` as the enum at `enumPointer`
  /// (the root, or the payload of the internal case).
  private static func refusal(_ error: JSONDecodingError, name: String, enumPointer: String)
    -> ActionError
  {
    // A nested action the type refuses (a child feature's internal action): -32003.
    if let type = error.refusedType { return .refused(type: type, reason: error.reason) }
    // Swift's enum decoding fails at the enum itself when no case has this name.
    if error.pointer == enumPointer {
      return .refused(type: name, reason: "unknown action type \"\(name)\"")
    }
    let prefix = enumPointer + "/" + escaped(name)
    if error.pointer == prefix { return .invalid(pointer: "", reason: error.reason) }
    if error.pointer.hasPrefix(prefix + "/") {
      return .invalid(pointer: String(error.pointer.dropFirst(prefix.count)), reason: error.reason)
    }
    return .invalid(pointer: error.pointer, reason: error.reason)
  }

  /// Decodes a wire event or action without a public check (for clients and tests).
  public static func decode<Value: Decodable>(_ type: Value.Type, from wire: JSON)
    throws(ActionError)
    -> Value
  {
    try decodeAction(type, from: wire, allowed: nil)
  }

  /// True while replay decodes a recorded action: internal actions (also those of a child,
  /// inside a `ChildAction`) decode too, since the recording holds what the core itself sent.
  /// Only replay sets it; a client's action is always checked.
  @TaskLocal static var decodingRecorded = false

  /// Encodes an action or event enum value to its wire object.
  public static func encode(_ value: some Encodable) throws -> JSON {
    let swiftShape = try JSONValueEncoder().encode(value)
    guard case .object(let outer) = swiftShape, outer.count == 1 else {
      throw WireFormatError(
        reason: "expected an enum with synthesized Codable (one key per case), got \(swiftShape)")
    }
    var (name, payload) = outer.member(at: 0)
    // An internal action travels as flat as a public one: `{"internal": {"_0": {"saved":
    // {...}}}}` is `{"type": "saved", ...}`.
    if name == internalCaseName, value is any EmbedsInternalActions,
      case .object(let wrapper) = payload, wrapper.count == 1,
      case .object(let inner)? = wrapper["_0"], inner.count == 1
    {
      (name, payload) = inner.member(at: 0)
    }
    var fields = JSONObject(reservingCapacity: 1 + (payload.objectValue?.count ?? 1))
    fields.set("type", .string(name))
    if case .object(let members) = payload {
      for (key, value) in members.members where key != "type" { fields.set(key, value) }
    } else {
      fields.set("value", payload)
    }
    return .object(fields)
  }

  /// The `type` of a wire object, `nil` unless it is an object with a string `type`.
  public static func typeName(of wire: JSON) -> String? {
    wire["type"]?.stringValue
  }

  static func escaped(_ token: String) -> String {
    guard token.contains(where: { $0 == "~" || $0 == "/" }) else { return token }
    var result = ""
    for character in token {
      switch character {
      case "~": result += "~0"
      case "/": result += "~1"
      default: result.append(character)
      }
    }
    return result
  }
}

/// A value whose `Codable` shape is not an enum's, so it has no wire form.
public struct WireFormatError: Error, Sendable {
  /// What was wrong, for a person.
  public var reason: String
}

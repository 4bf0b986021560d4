import JSON

/// The `params` of a request, read member by member; a missing or mistyped member is an
/// `-32602` whose pointer names it and whose reason says what was expected.
///
/// Methods declare a `Decodable` params type instead (``RPCMethod``); this stays so that a
/// method written against it (in a branch made before the method table) moves into
/// ``Connection/methods`` unchanged: `RPCMethod("history/get", Params.self, ...)`.
struct Params {
  let object: JSONObject

  /// Params given as an array are refused: every method of this protocol takes named members.
  init(_ params: JSON?) throws(RPCError) {
    switch params {
    case nil, .null?: object = JSONObject()
    case .object(let object)?: self.object = object
    case let other?:
      throw .invalidParams(
        pointer: "",
        reason: "expected the params as an object of named members, got \(other.kindDescription)")
    }
  }

  func string(_ key: String, _ meaning: String) throws(RPCError) -> String {
    guard let value = object[key] else {
      throw .invalidParams(pointer: "/\(key)", reason: "missing; expected a string (\(meaning))")
    }
    guard case .string(let string) = value else {
      throw .invalidParams(
        pointer: "/\(key)", reason: "expected a string (\(meaning)), got \(value.kindDescription)")
    }
    return string
  }

  func optionalString(_ key: String, _ meaning: String) throws(RPCError) -> String? {
    guard object[key] != nil else { return nil }
    return try string(key, meaning)
  }

  func optionalBool(_ key: String) throws(RPCError) -> Bool? {
    guard let value = object[key] else { return nil }
    guard case .bool(let bool) = value else {
      throw .invalidParams(
        pointer: "/\(key)", reason: "expected true or false, got \(value.kindDescription)")
    }
    return bool
  }

  /// A string member restricted to `choices`; absent means `nil`.
  func optionalChoice(_ key: String, _ choices: [String]) throws(RPCError) -> String? {
    guard let value = object[key] else { return nil }
    guard case .string(let string) = value, choices.contains(string) else {
      let list = choices.map { "\"\($0)\"" }.joined(separator: " or ")
      throw .invalidParams(pointer: "/\(key)", reason: "expected \(list), got \(value.description)")
    }
    return string
  }

  func object(_ key: String, _ meaning: String) throws(RPCError) -> JSON {
    guard let value = object[key] else {
      throw .invalidParams(pointer: "/\(key)", reason: "missing; expected an object (\(meaning))")
    }
    guard case .object = value else {
      throw .invalidParams(
        pointer: "/\(key)", reason: "expected an object (\(meaning)), got \(value.kindDescription)")
    }
    return value
  }

  func optionalObject(_ key: String, _ meaning: String) throws(RPCError) -> JSON? {
    guard object[key] != nil else { return nil }
    return try object(key, meaning)
  }

  /// An RFC 6901 pointer member (`path`), parsed; absent means the root.
  func pointer(_ key: String) throws(RPCError) -> JSONPointer {
    guard let text = try optionalString(key, "a JSON Pointer such as \"/items/0\"") else {
      return .root
    }
    do {
      return try JSONPointer(parsing: text)
    } catch {
      throw .invalidParams(pointer: "/\(key)", reason: error.reason)
    }
  }
}

extension Params: Decodable {
  /// The params object as a whole; ``RPCMethod`` has already refused params that are not one.
  init(from decoder: any Decoder) throws {
    let value = try JSON(from: decoder)
    guard case .object(let object) = value else {
      throw JSONDecodingError(
        pointer: JSONDecodingError.pointer(decoder.codingPath),
        reason: "expected the params as an object, got \(value.kindDescription)")
    }
    self.object = object
  }
}

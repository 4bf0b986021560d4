/// `JSON` fields in `Codable` types (a free-form payload, a merge patch): the Codable bridge
/// copies them as they are; other coders see the natural JSON shape.
///
/// ```swift
/// struct Envelope: Codable { var kind: String; var payload: JSON }
/// ```
extension JSON: Codable {
  /// Reads any JSON value; from ``JSONValueDecoder`` the value is taken as it is.
  public init(from decoder: any Decoder) throws {
    if let decoder = decoder as? ValueDecoder {
      self = decoder.value
      return
    }
    if var array = try? decoder.unkeyedContainer() {
      var elements: [JSON] = []
      while !array.isAtEnd { elements.append(try array.decode(JSON.self)) }
      self = .array(elements)
      return
    }
    if let object = try? decoder.container(keyedBy: CodingPathKey.self) {
      var members = JSONObject()
      for key in object.allKeys {
        members[key.stringValue] = try object.decode(JSON.self, forKey: key)
      }
      self = .object(members)
      return
    }
    let single = try decoder.singleValueContainer()
    if single.decodeNil() {
      self = .null
    } else if let flag = try? single.decode(Bool.self) {
      self = .bool(flag)
    } else if let integer = try? single.decode(Int64.self) {
      self = .integer(integer)
    } else if let double = try? single.decode(Double.self) {
      self = .double(double)
    } else {
      self = .string(try single.decode(String.self))
    }
  }

  /// Writes the value as it is; into ``JSONValueEncoder`` it is copied without a walk, and
  /// ``JSONTextEncoder`` writes its text as ``JSONWriter`` does.
  public func encode(to encoder: any Encoder) throws {
    if let encoder = encoder as? ValueEncoder {
      encoder.encodeRaw(self)
      return
    }
    if let encoder = encoder as? TextFrame {
      try encoder.encodeRaw(self)
      return
    }
    switch self {
    case .null:
      var single = encoder.singleValueContainer()
      try single.encodeNil()
    case .bool(let flag):
      var single = encoder.singleValueContainer()
      try single.encode(flag)
    case .integer(let integer):
      var single = encoder.singleValueContainer()
      try single.encode(integer)
    case .double(let double):
      var single = encoder.singleValueContainer()
      try single.encode(double)
    case .string(let string):
      var single = encoder.singleValueContainer()
      try single.encode(string)
    case .array(let elements):
      var array = encoder.unkeyedContainer()
      for element in elements { try array.encode(element) }
    case .object(let object):
      var container = encoder.container(keyedBy: CodingPathKey.self)
      for (key, value) in object.members {
        try container.encode(value, forKey: CodingPathKey(stringValue: key))
      }
    }
  }
}

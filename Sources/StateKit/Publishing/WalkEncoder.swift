import JSON

/// The `Encoder` of a `PatchWalk`, one per object walked (its `WalkLevel`): keyed containers
/// compare member by member against the old object; a single-value container publishes at the
/// same path; unkeyed containers and super-encoders are not followed (they poison the level,
/// and the walk encodes that value whole instead).
extension WalkLevel: Encoder {
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    keyedContainer(type)
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    poisonWalk()
    return DiscardingContainer()
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    WalkSingleValueContainer(level: self)
  }
}

struct WalkKeyedContainer<Key: CodingKey>: NullWritingKeyedContainer {
  let level: WalkLevel
  var walk: PatchWalk { level.walk }
  var codingPath: [any CodingKey] { [] }

  private func leaf(_ value: JSON, _ key: Key) {
    level.leaf(value, key.stringValue)
  }

  mutating func encodeNil(forKey key: Key) throws { leaf(.null, key) }
  mutating func encode(_ value: Bool, forKey key: Key) throws { leaf(.bool(value), key) }
  mutating func encode(_ value: String, forKey key: Key) throws { leaf(.string(value), key) }
  mutating func encode(_ value: Int, forKey key: Key) throws { leaf(.integer(Int64(value)), key) }
  mutating func encode(_ value: Int8, forKey key: Key) throws { leaf(.integer(Int64(value)), key) }
  mutating func encode(_ value: Int16, forKey key: Key) throws {
    leaf(.integer(Int64(value)), key)
  }
  mutating func encode(_ value: Int32, forKey key: Key) throws {
    leaf(.integer(Int64(value)), key)
  }
  mutating func encode(_ value: Int64, forKey key: Key) throws { leaf(.integer(value), key) }
  mutating func encode(_ value: UInt8, forKey key: Key) throws {
    leaf(.integer(Int64(value)), key)
  }
  mutating func encode(_ value: UInt16, forKey key: Key) throws {
    leaf(.integer(Int64(value)), key)
  }
  mutating func encode(_ value: UInt32, forKey key: Key) throws {
    leaf(.integer(Int64(value)), key)
  }
  // Doubles, floats and the widest unsigned integers go through the JSON layer's encoder,
  // which owns their edge cases (non-finite values, values past Int64.max).
  mutating func encode(_ value: Double, forKey key: Key) throws { try encodeValue(value, key) }
  mutating func encode(_ value: Float, forKey key: Key) throws { try encodeValue(value, key) }
  mutating func encode(_ value: UInt, forKey key: Key) throws { try encodeValue(value, key) }
  mutating func encode(_ value: UInt64, forKey key: Key) throws { try encodeValue(value, key) }

  private func encodeValue<T: Encodable>(_ value: T, _ key: Key) throws {
    leaf(try walk.encoder.encode(value), key)
  }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    let name = key.stringValue
    try walk.visit(value, at: level.path.appending(name), old: level.encoded(name))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let name = key.stringValue
    guard case .object(let old)? = level.encoded(name) else {
      level.poisonWalk()
      return KeyedEncodingContainer(DiscardingKeyedContainer<NestedKey>())
    }
    return KeyedEncodingContainer(
      WalkKeyedContainer<NestedKey>(level: level.nested(name, old: old)))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    level.poisonWalk()
    return DiscardingContainer()
  }

  mutating func superEncoder() -> any Encoder {
    level.poisonWalk()
    return DiscardingEncoder()
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    level.poisonWalk()
    return DiscardingEncoder()
  }
}

private struct WalkSingleValueContainer: SingleValueEncodingContainer {
  let level: WalkLevel
  var walk: PatchWalk { level.walk }
  var codingPath: [any CodingKey] { [] }

  /// The value replaces the whole level: every old member counts as handled.
  private func leaf(_ value: JSON) {
    level.encodedAll()
    walk.leaf(value, at: level.path, old: .object(level.old))
  }

  mutating func encodeNil() throws { leaf(.null) }
  mutating func encode(_ value: Bool) throws { leaf(.bool(value)) }
  mutating func encode(_ value: String) throws { leaf(.string(value)) }
  mutating func encode(_ value: Int) throws { leaf(.integer(Int64(value))) }
  mutating func encode(_ value: Int8) throws { leaf(.integer(Int64(value))) }
  mutating func encode(_ value: Int16) throws { leaf(.integer(Int64(value))) }
  mutating func encode(_ value: Int32) throws { leaf(.integer(Int64(value))) }
  mutating func encode(_ value: Int64) throws { leaf(.integer(value)) }
  mutating func encode(_ value: UInt8) throws { leaf(.integer(Int64(value))) }
  mutating func encode(_ value: UInt16) throws { leaf(.integer(Int64(value))) }
  mutating func encode(_ value: UInt32) throws { leaf(.integer(Int64(value))) }
  mutating func encode(_ value: Double) throws { leaf(try walk.encoder.encode(value)) }
  mutating func encode(_ value: Float) throws { leaf(try walk.encoder.encode(value)) }
  mutating func encode(_ value: UInt) throws { leaf(try walk.encoder.encode(value)) }
  mutating func encode(_ value: UInt64) throws { leaf(try walk.encoder.encode(value)) }

  mutating func encode<T: Encodable>(_ value: T) throws {
    level.encodedAll()
    try walk.visit(value, at: level.path, old: .object(level.old))
  }
}

/// Members go straight into the encoder's arrays, in the order they are encoded.
struct ObjectEncodingContainer<Key: CodingKey>: NullWritingKeyedContainer {
  let encoder: ValueEncoder

  var codingPath: [any CodingKey] { encoder.codingPath }

  private func path(_ key: Key) -> [any CodingKey] { encoder.codingPath + [key] }

  mutating func encodeNil(forKey key: Key) throws { encoder.appendMember(key.stringValue, .null) }
  mutating func encode(_ value: Bool, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, .bool(value))
  }
  mutating func encode(_ value: String, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, .string(value))
  }
  mutating func encode(_ value: Double, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, try number(value, path: path(key)))
  }
  mutating func encode(_ value: Float, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, try number(value, path: path(key)))
  }
  mutating func encode(_ value: Int, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: Int8, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: Int16, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: Int32, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: Int64, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, .integer(value))
  }
  mutating func encode(_ value: UInt, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, try integer(value, path: path(key)))
  }
  mutating func encode(_ value: UInt8, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: UInt16, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: UInt32, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: UInt64, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, try integer(value, path: path(key)))
  }
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    encoder.appendMember(key.stringValue, try encoder.encodeChild(value, key: key))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let child = encoder.pendingChild(key: key, kind: .object)
    return KeyedEncodingContainer(ObjectEncodingContainer<NestedKey>(encoder: child))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    ArrayEncodingContainer(encoder: encoder.pendingChild(key: key, kind: .array))
  }

  mutating func superEncoder() -> any Encoder {
    superEncoder(key: CodingPathKey.super)
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    superEncoder(key: key)
  }

  private func superEncoder(key: any CodingKey) -> any Encoder {
    encoder.pendingChild(key: key, kind: .empty)
  }
}

/// Elements go straight into the encoder's array.
struct ArrayEncodingContainer: UnkeyedEncodingContainer {
  let encoder: ValueEncoder

  var codingPath: [any CodingKey] { encoder.codingPath }
  var count: Int { encoder.elementCount }

  private var nextKey: CodingPathKey { CodingPathKey(intValue: encoder.elementCount) }
  private func path() -> [any CodingKey] { encoder.codingPath + [nextKey] }

  mutating func encodeNil() throws { encoder.appendElement(.null) }
  mutating func encode(_ value: Bool) throws { encoder.appendElement(.bool(value)) }
  mutating func encode(_ value: String) throws { encoder.appendElement(.string(value)) }
  mutating func encode(_ value: Double) throws {
    encoder.appendElement(try number(value, path: path()))
  }
  mutating func encode(_ value: Float) throws {
    encoder.appendElement(try number(value, path: path()))
  }
  mutating func encode(_ value: Int) throws { encoder.appendElement(.integer(Int64(value))) }
  mutating func encode(_ value: Int8) throws { encoder.appendElement(.integer(Int64(value))) }
  mutating func encode(_ value: Int16) throws { encoder.appendElement(.integer(Int64(value))) }
  mutating func encode(_ value: Int32) throws { encoder.appendElement(.integer(Int64(value))) }
  mutating func encode(_ value: Int64) throws { encoder.appendElement(.integer(value)) }
  mutating func encode(_ value: UInt) throws {
    encoder.appendElement(try integer(value, path: path()))
  }
  mutating func encode(_ value: UInt8) throws { encoder.appendElement(.integer(Int64(value))) }
  mutating func encode(_ value: UInt16) throws { encoder.appendElement(.integer(Int64(value))) }
  mutating func encode(_ value: UInt32) throws { encoder.appendElement(.integer(Int64(value))) }
  mutating func encode(_ value: UInt64) throws {
    encoder.appendElement(try integer(value, path: path()))
  }
  mutating func encode<T: Encodable>(_ value: T) throws {
    encoder.appendElement(try encoder.encodeChild(value, key: nextKey))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
    -> KeyedEncodingContainer<NestedKey>
  {
    let child = encoder.pendingChild(key: nextKey, kind: .object)
    return KeyedEncodingContainer(ObjectEncodingContainer<NestedKey>(encoder: child))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    ArrayEncodingContainer(encoder: encoder.pendingChild(key: nextKey, kind: .array))
  }

  mutating func superEncoder() -> any Encoder {
    encoder.pendingChild(key: nextKey, kind: .empty)
  }
}

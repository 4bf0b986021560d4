/// Where values that are walked past go: nowhere. A poisoned level's values (the level is
/// encoded whole instead, WalkEncoder.swift), and the values off the path an `ArrayLocator`
/// follows.
struct DiscardingEncoder: Encoder {
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }
  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(DiscardingKeyedContainer<Key>())
  }
  func unkeyedContainer() -> any UnkeyedEncodingContainer { DiscardingContainer() }
  func singleValueContainer() -> any SingleValueEncodingContainer { DiscardingContainer() }
}

struct DiscardingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  var codingPath: [any CodingKey] { [] }
  mutating func encodeNil(forKey key: Key) throws {}
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    KeyedEncodingContainer(DiscardingKeyedContainer<NestedKey>())
  }
  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    DiscardingContainer()
  }
  mutating func superEncoder() -> any Encoder { DiscardingEncoder() }
  mutating func superEncoder(forKey key: Key) -> any Encoder { DiscardingEncoder() }
}

struct DiscardingContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
  var codingPath: [any CodingKey] { [] }
  var count: Int { 0 }
  mutating func encodeNil() throws {}
  mutating func encode<T: Encodable>(_ value: T) throws {}
  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
    -> KeyedEncodingContainer<NestedKey>
  {
    KeyedEncodingContainer(DiscardingKeyedContainer<NestedKey>())
  }
  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { DiscardingContainer() }
  mutating func superEncoder() -> any Encoder { DiscardingEncoder() }
}

import JSON

/// The `Decoder` behind `SchemaProbe`: hands out placeholder values and records the shape
/// of what it was asked for in a `SchemaSlot`.
struct ProbeDecoder: Decoder {
  let slot: SchemaSlot
  let context: ProbeContext
  var codingPath: [any CodingKey] = []
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    slot.isObject = true
    return KeyedDecodingContainer(ProbeKeyedContainer<Key>(decoder: self))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let items = slot.items ?? SchemaSlot()
    slot.items = items
    return ProbeUnkeyedContainer(decoder: self, items: items)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    ProbeSingleValueContainer(decoder: self)
  }
}

struct ProbeError: Error {}

private struct ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: ProbeDecoder
  var codingPath: [any CodingKey] { decoder.codingPath }

  var allKeys: [Key] {
    let context = decoder.context
    if let name = context.probeCase { return Key(stringValue: name).map { [$0] } ?? [] }
    // A key type that takes any string is a dictionary's: describe its values.
    if let any = Key(stringValue: "\u{1}probe") {
      decoder.slot.additional = decoder.slot.additional ?? SchemaSlot()
      return [any]
    }
    // Otherwise an enum: follow the sample's case if there is one, and say only "object".
    decoder.slot.isEnumLike = true
    guard let keys = context.sample?.objectValue?.keys else { return [] }
    return keys.prefix(1).compactMap { Key(stringValue: $0) }
  }

  func contains(_ key: Key) -> Bool { true }
  func decodeNil(forKey key: Key) throws -> Bool { false }

  private func slot(for key: Key, required: Bool) -> SchemaSlot {
    if key.stringValue == "\u{1}probe", let additional = decoder.slot.additional {
      return additional
    }
    return decoder.slot.property(key.stringValue, required: required)
  }

  private func childContext(_ key: Key) -> ProbeContext {
    let name = key.stringValue == "\u{1}probe" ? "*" : key.stringValue
    return decoder.context.child(name, sample: decoder.context.sample?[key.stringValue])
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    try SchemaProbe.probe(T.self, into: slot(for: key, required: true), context: childContext(key))
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    let child = slot(for: key, required: false)
    guard decoder.context.depth < SchemaProbe.depthLimit else { return nil }
    do {
      return try SchemaProbe.probe(T.self, into: child, context: childContext(key))
    } catch {
      // Recorded where it failed; the optional lets the containing type go on.
      child.fixed = [:]
      return nil
    }
  }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decode(T: type, key) }
  func decode(_ type: String.Type, forKey key: Key) throws -> String { try decode(T: type, key) }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decode(T: type, key) }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decode(T: type, key) }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decode(T: type, key) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decode(T: type, key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decode(T: type, key) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decode(T: type, key) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decode(T: type, key) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decode(T: type, key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decode(T: type, key) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decode(T: type, key) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decode(T: type, key) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decode(T: type, key) }

  private func decode<T: Decodable>(T type: T.Type, _ key: Key) throws -> T {
    try decode(type, forKey: key)
  }

  func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { optional(type, key) }
  func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
    optional(type, key)
  }
  func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
    optional(type, key)
  }
  func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { optional(type, key) }
  func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { optional(type, key) }
  func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { optional(type, key) }
  func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { optional(type, key) }
  func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { optional(type, key) }
  func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { optional(type, key) }
  func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { optional(type, key) }
  func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { optional(type, key) }
  func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
    optional(type, key)
  }
  func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
    optional(type, key)
  }
  func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
    optional(type, key)
  }

  private func optional<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
    (try? decodeIfPresent(type, forKey: key)) ?? nil
  }

  func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    try nested(key).container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    try nested(key).unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder { decoder }
  func superDecoder(forKey key: Key) throws -> any Decoder { nested(key) }

  private func nested(_ key: Key) -> ProbeDecoder {
    ProbeDecoder(
      slot: slot(for: key, required: true), context: childContext(key),
      codingPath: codingPath + [key])
  }
}

private struct ProbeUnkeyedContainer: UnkeyedDecodingContainer {
  let decoder: ProbeDecoder
  let items: SchemaSlot
  var codingPath: [any CodingKey] { decoder.codingPath }
  var count: Int? { nil }
  var currentIndex = 0
  /// One element is probed; past the depth limit none is, so recursive types end.
  var isAtEnd: Bool { currentIndex > 0 || decoder.context.depth >= SchemaProbe.depthLimit }

  init(decoder: ProbeDecoder, items: SchemaSlot) {
    self.decoder = decoder
    self.items = items
  }

  private var context: ProbeContext {
    decoder.context.child("*", sample: decoder.context.sample?[0])
  }

  mutating func decodeNil() throws -> Bool { false }

  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    guard !isAtEnd else { throw ProbeError() }
    currentIndex += 1
    return try SchemaProbe.probe(T.self, into: items, context: context)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    currentIndex += 1
    return try ProbeDecoder(slot: items, context: context).container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    currentIndex += 1
    return try ProbeDecoder(slot: items, context: context).unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder {
    currentIndex += 1
    return ProbeDecoder(slot: items, context: context)
  }
}

private struct ProbeSingleValueContainer: SingleValueDecodingContainer {
  let decoder: ProbeDecoder
  var codingPath: [any CodingKey] { decoder.codingPath }

  func decodeNil() -> Bool { false }

  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try SchemaProbe.probe(T.self, into: decoder.slot, context: decoder.context)
  }

  func decode(_ type: Bool.Type) throws -> Bool { try decode(T: type) }
  func decode(_ type: String.Type) throws -> String { try decode(T: type) }
  func decode(_ type: Double.Type) throws -> Double { try decode(T: type) }
  func decode(_ type: Float.Type) throws -> Float { try decode(T: type) }
  func decode(_ type: Int.Type) throws -> Int { try decode(T: type) }
  func decode(_ type: Int8.Type) throws -> Int8 { try decode(T: type) }
  func decode(_ type: Int16.Type) throws -> Int16 { try decode(T: type) }
  func decode(_ type: Int32.Type) throws -> Int32 { try decode(T: type) }
  func decode(_ type: Int64.Type) throws -> Int64 { try decode(T: type) }
  func decode(_ type: UInt.Type) throws -> UInt { try decode(T: type) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try decode(T: type) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try decode(T: type) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try decode(T: type) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try decode(T: type) }

  private func decode<T: Decodable>(T type: T.Type) throws -> T {
    try SchemaProbe.probe(T.self, into: decoder.slot, context: decoder.context)
  }
}

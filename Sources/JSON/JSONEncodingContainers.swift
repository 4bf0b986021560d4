/// A value whose JSON is known only once encoding is over: a container handed out by
/// `nestedContainer`/`nestedUnkeyedContainer`/`superEncoder`, which the caller fills after the
/// call returns. Rare (synthesized code never does it), so resolved at the end.
enum PendingValue {
  case object(ObjectBox)
  case array(ArrayBox)
  case encoder(ValueEncoder)

  var json: JSON {
    switch self {
    case .object(let box): return box.json
    case .array(let box): return box.json
    case .encoder(let encoder): return encoder.result
    }
  }
}

/// The members of an object being encoded, in the order they were encoded.
final class ObjectBox {
  var keys: [String] = []
  var values: [JSON] = []
  var pending: [(position: Int, value: PendingValue)] = []

  init() {
    // Most objects a struct encodes have a handful of fields: one allocation each instead of
    // growing through 1, 2, 4 and 8.
    keys.reserveCapacity(8)
    values.reserveCapacity(8)
  }

  var json: JSON {
    var values = self.values
    for (position, value) in pending { values[position] = value.json }
    return .object(JSONObject(encodedKeys: keys, values: values))
  }

  func append(_ key: String, _ value: JSON) {
    keys.append(key)
    values.append(value)
  }

  func appendPending(_ key: String, _ value: PendingValue) {
    pending.append((values.count, value))
    append(key, .null)
  }
}

/// The elements of an array being encoded.
final class ArrayBox {
  var values: [JSON] = []
  var pending: [(position: Int, value: PendingValue)] = []

  var json: JSON {
    var values = self.values
    for (position, value) in pending { values[position] = value.json }
    return .array(values)
  }

  func appendPending(_ value: PendingValue) {
    pending.append((values.count, value))
    values.append(.null)
  }
}

struct ObjectEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let box: ObjectBox
  let encoder: ValueEncoder

  var codingPath: [any CodingKey] { encoder.codingPath }

  private func path(_ key: Key) -> [any CodingKey] { encoder.codingPath + [key] }

  mutating func encodeNil(forKey key: Key) throws { box.append(key.stringValue, .null) }
  mutating func encode(_ value: Bool, forKey key: Key) throws {
    box.append(key.stringValue, .bool(value))
  }
  mutating func encode(_ value: String, forKey key: Key) throws {
    box.append(key.stringValue, .string(value))
  }
  mutating func encode(_ value: Double, forKey key: Key) throws {
    box.append(key.stringValue, try number(value, path: path(key)))
  }
  mutating func encode(_ value: Float, forKey key: Key) throws {
    box.append(key.stringValue, try number(value, path: path(key)))
  }
  mutating func encode(_ value: Int, forKey key: Key) throws {
    box.append(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: Int8, forKey key: Key) throws {
    box.append(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: Int16, forKey key: Key) throws {
    box.append(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: Int32, forKey key: Key) throws {
    box.append(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: Int64, forKey key: Key) throws {
    box.append(key.stringValue, .integer(value))
  }
  mutating func encode(_ value: UInt, forKey key: Key) throws {
    box.append(key.stringValue, try integer(value, path: path(key)))
  }
  mutating func encode(_ value: UInt8, forKey key: Key) throws {
    box.append(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: UInt16, forKey key: Key) throws {
    box.append(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: UInt32, forKey key: Key) throws {
    box.append(key.stringValue, .integer(Int64(value)))
  }
  mutating func encode(_ value: UInt64, forKey key: Key) throws {
    box.append(key.stringValue, try integer(value, path: path(key)))
  }
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    box.append(key.stringValue, try encoder.encodeChild(value, key: key))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let nested = ObjectBox()
    box.appendPending(key.stringValue, .object(nested))
    let child = ValueEncoder(parent: encoder, key: key)
    child.storage = .object(nested)
    return KeyedEncodingContainer(ObjectEncodingContainer<NestedKey>(box: nested, encoder: child))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let nested = ArrayBox()
    box.appendPending(key.stringValue, .array(nested))
    let child = ValueEncoder(parent: encoder, key: key)
    child.storage = .array(nested)
    return ArrayEncodingContainer(box: nested, encoder: child)
  }

  mutating func superEncoder() -> any Encoder {
    superEncoder(key: CodingPathKey.super)
  }

  mutating func superEncoder(forKey key: Key) -> any Encoder {
    superEncoder(key: key)
  }

  private func superEncoder(key: any CodingKey) -> any Encoder {
    let child = ValueEncoder(parent: encoder, key: key)
    box.appendPending(key.stringValue, .encoder(child))
    return child
  }
}

struct ArrayEncodingContainer: UnkeyedEncodingContainer {
  let box: ArrayBox
  let encoder: ValueEncoder

  var codingPath: [any CodingKey] { encoder.codingPath }
  var count: Int { box.values.count }

  private var nextKey: CodingPathKey { CodingPathKey(intValue: box.values.count) }
  private func path() -> [any CodingKey] { encoder.codingPath + [nextKey] }

  mutating func encodeNil() throws { box.values.append(.null) }
  mutating func encode(_ value: Bool) throws { box.values.append(.bool(value)) }
  mutating func encode(_ value: String) throws { box.values.append(.string(value)) }
  mutating func encode(_ value: Double) throws {
    box.values.append(try number(value, path: path()))
  }
  mutating func encode(_ value: Float) throws {
    box.values.append(try number(value, path: path()))
  }
  mutating func encode(_ value: Int) throws { box.values.append(.integer(Int64(value))) }
  mutating func encode(_ value: Int8) throws { box.values.append(.integer(Int64(value))) }
  mutating func encode(_ value: Int16) throws { box.values.append(.integer(Int64(value))) }
  mutating func encode(_ value: Int32) throws { box.values.append(.integer(Int64(value))) }
  mutating func encode(_ value: Int64) throws { box.values.append(.integer(value)) }
  mutating func encode(_ value: UInt) throws { box.values.append(try integer(value, path: path())) }
  mutating func encode(_ value: UInt8) throws { box.values.append(.integer(Int64(value))) }
  mutating func encode(_ value: UInt16) throws { box.values.append(.integer(Int64(value))) }
  mutating func encode(_ value: UInt32) throws { box.values.append(.integer(Int64(value))) }
  mutating func encode(_ value: UInt64) throws {
    box.values.append(try integer(value, path: path()))
  }
  mutating func encode<T: Encodable>(_ value: T) throws {
    box.values.append(try encoder.encodeChild(value, key: nextKey))
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
    -> KeyedEncodingContainer<NestedKey>
  {
    let nested = ObjectBox()
    let child = ValueEncoder(parent: encoder, key: nextKey)
    child.storage = .object(nested)
    box.appendPending(.object(nested))
    return KeyedEncodingContainer(ObjectEncodingContainer<NestedKey>(box: nested, encoder: child))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let nested = ArrayBox()
    let child = ValueEncoder(parent: encoder, key: nextKey)
    child.storage = .array(nested)
    box.appendPending(.array(nested))
    return ArrayEncodingContainer(box: nested, encoder: child)
  }

  mutating func superEncoder() -> any Encoder {
    let child = ValueEncoder(parent: encoder, key: nextKey)
    box.appendPending(.encoder(child))
    return child
  }
}

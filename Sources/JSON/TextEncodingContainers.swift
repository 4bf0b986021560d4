/// The containers of ``JSONTextEncoder``: each write goes straight to the text, after its
/// frame checked that the stream can take it there (``TextFrame/enter(_:)``).
struct TextKeyedContainer<Key: CodingKey>: NullWritingKeyedContainer {
  let frame: TextFrame
  let generation: Int

  var codingPath: [any CodingKey] { frame.codingPath }

  private func path(_ key: Key) -> [any CodingKey] { frame.codingPath + [key] }
  private var writer: UnsafeMutablePointer<JSONWriter> { frame.session.writer }

  /// Whether to write the member (false: a container the tree path would not see, ignored
  /// while it writes the value); throws when the stream cannot follow.
  private func begin(_ key: Key) throws -> Bool {
    guard frame.beginMember(key.stringValue, generation) else { return try frame.refused() }
    return true
  }

  mutating func encodeNil(forKey key: Key) throws {
    guard try begin(key) else { return }
    writer.pointee.append("null")
  }
  mutating func encode(_ value: Bool, forKey key: Key) throws {
    guard try begin(key) else { return }
    if value { writer.pointee.append("true") } else { writer.pointee.append("false") }
  }
  mutating func encode(_ value: String, forKey key: Key) throws {
    guard try begin(key) else { return }
    writer.pointee.write(string: value)
  }
  mutating func encode(_ value: Double, forKey key: Key) throws {
    let double = try finite(value, path: path(key))
    guard try begin(key) else { return }
    writer.pointee.write(finite: double)
  }
  mutating func encode(_ value: Float, forKey key: Key) throws {
    let double = try finite(value, path: path(key))
    guard try begin(key) else { return }
    writer.pointee.write(finite: double)
  }
  mutating func encode(_ value: Int, forKey key: Key) throws { try write(Int64(value), key) }
  mutating func encode(_ value: Int8, forKey key: Key) throws { try write(Int64(value), key) }
  mutating func encode(_ value: Int16, forKey key: Key) throws { try write(Int64(value), key) }
  mutating func encode(_ value: Int32, forKey key: Key) throws { try write(Int64(value), key) }
  mutating func encode(_ value: Int64, forKey key: Key) throws { try write(value, key) }
  mutating func encode(_ value: UInt, forKey key: Key) throws {
    try write(try exact(value, path: path(key)), key)
  }
  mutating func encode(_ value: UInt8, forKey key: Key) throws { try write(Int64(value), key) }
  mutating func encode(_ value: UInt16, forKey key: Key) throws { try write(Int64(value), key) }
  mutating func encode(_ value: UInt32, forKey key: Key) throws { try write(Int64(value), key) }
  mutating func encode(_ value: UInt64, forKey key: Key) throws {
    try write(try exact(value, path: path(key)), key)
  }
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    guard try begin(key) else { return }
    try frame.encodeChild(value, key: key)
  }

  private func write(_ integer: Int64, _ key: Key) throws {
    guard try begin(key) else { return }
    writer.pointee.write(integer: integer)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    let begun = frame.beginMember(key.stringValue, generation)
    let nested = frame.openNested(key: key, object: true, begun: begun)
    return KeyedEncodingContainer(
      TextKeyedContainer<NestedKey>(frame: nested, generation: nested.generation))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    let begun = frame.beginMember(key.stringValue, generation)
    let nested = frame.openNested(key: key, object: false, begun: begun)
    return TextUnkeyedContainer(frame: nested, generation: nested.generation)
  }

  mutating func superEncoder() -> any Encoder { frame.refuseSuperEncoder() }

  mutating func superEncoder(forKey key: Key) -> any Encoder { frame.refuseSuperEncoder() }
}

struct TextUnkeyedContainer: UnkeyedEncodingContainer {
  let frame: TextFrame
  let generation: Int

  var codingPath: [any CodingKey] { frame.codingPath }
  var count: Int { frame.count }

  private var nextKey: CodingPathKey { CodingPathKey(intValue: frame.count) }
  private func path() -> [any CodingKey] { frame.codingPath + [nextKey] }
  private var writer: UnsafeMutablePointer<JSONWriter> { frame.session.writer }

  /// Whether to write the element, as the keyed container's `begin(_:)` says.
  private func begin() throws -> Bool {
    guard frame.beginElement(generation) else { return try frame.refused() }
    return true
  }

  mutating func encodeNil() throws {
    guard try begin() else { return }
    writer.pointee.append("null")
  }
  mutating func encode(_ value: Bool) throws {
    guard try begin() else { return }
    if value { writer.pointee.append("true") } else { writer.pointee.append("false") }
  }
  mutating func encode(_ value: String) throws {
    guard try begin() else { return }
    writer.pointee.write(string: value)
  }
  mutating func encode(_ value: Double) throws {
    let double = try finite(value, path: path())
    guard try begin() else { return }
    writer.pointee.write(finite: double)
  }
  mutating func encode(_ value: Float) throws {
    let double = try finite(value, path: path())
    guard try begin() else { return }
    writer.pointee.write(finite: double)
  }
  mutating func encode(_ value: Int) throws { try write(Int64(value)) }
  mutating func encode(_ value: Int8) throws { try write(Int64(value)) }
  mutating func encode(_ value: Int16) throws { try write(Int64(value)) }
  mutating func encode(_ value: Int32) throws { try write(Int64(value)) }
  mutating func encode(_ value: Int64) throws { try write(value) }
  mutating func encode(_ value: UInt) throws { try write(try exact(value, path: path())) }
  mutating func encode(_ value: UInt8) throws { try write(Int64(value)) }
  mutating func encode(_ value: UInt16) throws { try write(Int64(value)) }
  mutating func encode(_ value: UInt32) throws { try write(Int64(value)) }
  mutating func encode(_ value: UInt64) throws { try write(try exact(value, path: path())) }
  mutating func encode<T: Encodable>(_ value: T) throws {
    let key = nextKey
    guard try begin() else { return }
    try frame.encodeChild(value, key: key)
  }

  private func write(_ integer: Int64) throws {
    guard try begin() else { return }
    writer.pointee.write(integer: integer)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
    -> KeyedEncodingContainer<NestedKey>
  {
    let key = nextKey
    let nested = frame.openNested(key: key, object: true, begun: frame.beginElement(generation))
    return KeyedEncodingContainer(
      TextKeyedContainer<NestedKey>(frame: nested, generation: nested.generation))
  }

  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
    let key = nextKey
    let nested = frame.openNested(key: key, object: false, begun: frame.beginElement(generation))
    return TextUnkeyedContainer(frame: nested, generation: nested.generation)
  }

  mutating func superEncoder() -> any Encoder { frame.refuseSuperEncoder() }
}

struct TextSingleValueContainer: SingleValueEncodingContainer {
  let frame: TextFrame
  let generation: Int

  var codingPath: [any CodingKey] { frame.codingPath }

  private var writer: UnsafeMutablePointer<JSONWriter> { frame.session.writer }

  mutating func encodeNil() throws {
    guard try frame.beginSingle(generation) else { return }
    writer.pointee.append("null")
    frame.endSingle()
  }
  mutating func encode(_ value: Bool) throws {
    guard try frame.beginSingle(generation) else { return }
    if value { writer.pointee.append("true") } else { writer.pointee.append("false") }
    frame.endSingle()
  }
  mutating func encode(_ value: String) throws {
    guard try frame.beginSingle(generation) else { return }
    writer.pointee.write(string: value)
    frame.endSingle()
  }
  mutating func encode(_ value: Double) throws {
    let double = try finite(value, path: codingPath)
    guard try frame.beginSingle(generation) else { return }
    writer.pointee.write(finite: double)
    frame.endSingle()
  }
  mutating func encode(_ value: Float) throws {
    let double = try finite(value, path: codingPath)
    guard try frame.beginSingle(generation) else { return }
    writer.pointee.write(finite: double)
    frame.endSingle()
  }
  mutating func encode(_ value: Int) throws { try write(Int64(value)) }
  mutating func encode(_ value: Int8) throws { try write(Int64(value)) }
  mutating func encode(_ value: Int16) throws { try write(Int64(value)) }
  mutating func encode(_ value: Int32) throws { try write(Int64(value)) }
  mutating func encode(_ value: Int64) throws { try write(value) }
  mutating func encode(_ value: UInt) throws { try write(try exact(value, path: codingPath)) }
  mutating func encode(_ value: UInt8) throws { try write(Int64(value)) }
  mutating func encode(_ value: UInt16) throws { try write(Int64(value)) }
  mutating func encode(_ value: UInt32) throws { try write(Int64(value)) }
  mutating func encode(_ value: UInt64) throws { try write(try exact(value, path: codingPath)) }
  mutating func encode<T: Encodable>(_ value: T) throws {
    guard try frame.beginSingle(generation) else { return }
    try frame.encodeInner(value)
  }

  private func write(_ integer: Int64) throws {
    guard try frame.beginSingle(generation) else { return }
    writer.pointee.write(integer: integer)
    frame.endSingle()
  }
}

/// `value` as the double the tree holds for it (a `Float` through its own shortest text);
/// throws the tree's error for a non-finite one.
private func finite<F: BinaryFloatingPoint>(
  _ value: F, path: @autoclosure () -> [any CodingKey]
) throws -> Double {
  if let double = value as? Double, double.isFinite { return double }
  guard case .double(let double) = try number(value, path: path()) else {
    preconditionFailure("number(_:path:) gives a double")
  }
  return double
}

/// An unsigned integer as the tree's `Int64`; throws the tree's error above `Int64.max`.
private func exact<U: FixedWidthInteger & UnsignedInteger>(
  _ value: U, path: @autoclosure () -> [any CodingKey]
) throws -> Int64 {
  if let exact = Int64(exactly: value) { return exact }
  guard case .integer(let exact) = try integer(value, path: path()) else {
    preconditionFailure("integer(_:path:) gives an integer")
  }
  return exact
}

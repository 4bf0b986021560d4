/// A keyed encoding container that writes an absent optional as `null` instead of leaving the
/// key out.
///
/// Synthesized `Encodable` encodes an optional with `encodeIfPresent`, which by default omits
/// a `nil`. A published state is better with one shape: a client can read every key, a schema
/// can list them all, and a value that comes and goes is one `replace` in a patch rather than
/// an `add` and a `remove`. So both our encoders (`JSONValueEncoder` and StateKit's publishing
/// walk) write `null`, and no feature needs a hand-written `encode(to:)` for it. Decoding
/// reads a `null` and a missing key alike as `nil`.
public protocol NullWritingKeyedContainer: KeyedEncodingContainerProtocol {}

extension NullWritingKeyedContainer {
  @inline(__always)
  private mutating func either<T>(
    _ value: T?, _ key: Key, _ encode: (inout Self, T) throws -> Void
  ) throws {
    if let value { try encode(&self, value) } else { try encodeNil(forKey: key) }
  }

  public mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
  public mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
    try either(value, key) { try $0.encode($1, forKey: key) }
  }
}

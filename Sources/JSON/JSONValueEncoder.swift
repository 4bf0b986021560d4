#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Encodes an `Encodable` value straight to `JSON`, with no text in between: how every
/// published view and every action reaches the wire.
///
/// Objects keep the order in which the value encodes its keys, so a synthesized `Encodable`
/// struct comes out in declaration order. `Date` is an ISO 8601 string (milliseconds when
/// present), `URL` its absolute string, `Data` Base64, `JSON` itself is copied as is.
/// Refused with `EncodingError.invalidValue`: non-finite floating-point values, and
/// `UInt64`/`UInt` values above `Int64.max` (JSON integers here are `Int64`).
///
/// ```swift
/// struct Item: Encodable { var id = "sku-7"; var quantity = 2 }
/// try JSONValueEncoder().encode(Item())  // ["id": "sku-7", "quantity": 2]
/// ```
public struct JSONValueEncoder: Sendable {
  /// An encoder; it has no settings, so one can be shared freely.
  public init() {}

  /// The JSON of `value`; throws `EncodingError.invalidValue` for values JSON cannot hold.
  public func encode(_ value: some Encodable) throws -> JSON {
    try ValueEncoder(parent: nil, key: nil).encodeValue(value)
  }
}

/// The `Encoder` behind ``JSONValueEncoder``: one instance per nested value, holding what that
/// value encoded. A class, because containers handed out keep writing into it.
final class ValueEncoder: Encoder, SingleValueEncodingContainer {
  enum Storage {
    case empty
    case value(JSON)
    case object(ObjectBox)
    case array(ArrayBox)
  }

  private let parent: ValueEncoder?
  private let key: (any CodingKey)?
  var storage = Storage.empty

  init(parent: ValueEncoder?, key: (any CodingKey)?) {
    self.parent = parent
    self.key = key
  }

  /// Built on demand (errors only), from the parent chain, so encoding pays no path arrays.
  var codingPath: [any CodingKey] {
    var path: [any CodingKey] = []
    var encoder: ValueEncoder? = self
    while let current = encoder, let key = current.key {
      path.append(key)
      encoder = current.parent
    }
    return path.reversed()
  }

  var userInfo: [CodingUserInfoKey: Any] { [:] }

  /// What was encoded; a value that encoded nothing is an empty object, as Foundation does.
  var result: JSON {
    switch storage {
    case .empty: return .object(JSONObject())
    case .value(let value): return value
    case .object(let box): return box.json
    case .array(let box): return box.json
    }
  }

  /// Encodes `value` (a child of this encoder at `key`, or the root) and returns its JSON.
  func encodeValue<T: Encodable>(_ value: T) throws -> JSON {
    if let special = try Self.special(value, at: self) { return special }
    try value.encode(to: self)
    return result
  }

  /// The JSON of `value` encoded as a member or element of this encoder's container.
  func encodeChild<T: Encodable>(_ value: T, key: any CodingKey) throws -> JSON {
    if let special = try Self.special(value, at: self) { return special }
    let child = ValueEncoder(parent: self, key: key)
    try value.encode(to: child)
    return child.result
  }

  /// Types with a JSON form of their own rather than their `Encodable` one.
  private static func special<T: Encodable>(_ value: T, at encoder: ValueEncoder) throws -> JSON? {
    if T.self == JSON.self, let json = value as? JSON { return json }
    if T.self == Date.self, let date = value as? Date {
      return .string(ISO8601Date.string(from: date))
    }
    if T.self == URL.self, let url = value as? URL { return .string(url.absoluteString) }
    if T.self == Data.self, let data = value as? Data {
      return .string(data.base64EncodedString())
    }
    return nil
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    let box: ObjectBox
    if case .object(let existing) = storage {
      box = existing
    } else {
      box = ObjectBox()
      storage = .object(box)
    }
    return KeyedEncodingContainer(ObjectEncodingContainer<Key>(box: box, encoder: self))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    let box: ArrayBox
    if case .array(let existing) = storage {
      box = existing
    } else {
      box = ArrayBox()
      storage = .array(box)
    }
    return ArrayEncodingContainer(box: box, encoder: self)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer { self }

  // MARK: SingleValueEncodingContainer

  func encodeNil() throws { storage = .value(.null) }
  func encode(_ value: Bool) throws { storage = .value(.bool(value)) }
  func encode(_ value: String) throws { storage = .value(.string(value)) }
  func encode(_ value: Double) throws { storage = .value(try number(value, path: codingPath)) }
  func encode(_ value: Float) throws { storage = .value(try number(value, path: codingPath)) }
  func encode(_ value: Int) throws { storage = .value(.integer(Int64(value))) }
  func encode(_ value: Int8) throws { storage = .value(.integer(Int64(value))) }
  func encode(_ value: Int16) throws { storage = .value(.integer(Int64(value))) }
  func encode(_ value: Int32) throws { storage = .value(.integer(Int64(value))) }
  func encode(_ value: Int64) throws { storage = .value(.integer(value)) }
  func encode(_ value: UInt) throws { storage = .value(try integer(value, path: codingPath)) }
  func encode(_ value: UInt8) throws { storage = .value(.integer(Int64(value))) }
  func encode(_ value: UInt16) throws { storage = .value(.integer(Int64(value))) }
  func encode(_ value: UInt32) throws { storage = .value(.integer(Int64(value))) }
  func encode(_ value: UInt64) throws { storage = .value(try integer(value, path: codingPath)) }
  func encode<T: Encodable>(_ value: T) throws { storage = .value(try encodeValue(value)) }
}

/// A finite double as JSON; NaN and infinities have no JSON form.
func number<F: BinaryFloatingPoint>(_ value: F, path: @autoclosure () -> [any CodingKey]) throws
  -> JSON
{
  guard value.isFinite else {
    throw EncodingError.invalidValue(
      value,
      EncodingError.Context(
        codingPath: path(), debugDescription: "\(value) is not a JSON number (only finite values)"))
  }
  return .double(Double(value))
}

/// An unsigned integer as a JSON integer, which holds up to `Int64.max`.
func integer<U: FixedWidthInteger & UnsignedInteger>(
  _ value: U, path: @autoclosure () -> [any CodingKey]
) throws -> JSON {
  guard let exact = Int64(exactly: value) else {
    throw EncodingError.invalidValue(
      value,
      EncodingError.Context(
        codingPath: path(),
        debugDescription: "\(value) is above \(Int64.max), the largest JSON integer here"))
  }
  return .integer(exact)
}

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Encodes an `Encodable` value straight to `JSON`, with no text in between: how every
/// published view and every action reaches the wire.
///
/// Objects keep the order in which the value encodes its keys, so a synthesized `Encodable`
/// struct comes out in declaration order. `Date` is an ISO 8601 UTC string to the
/// millisecond (`2026-11-29T17:46:39.000Z`, see `ISO8601Date`), `URL` its absolute string, `Data` Base64, `JSON` itself is copied as is.
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

  /// `encode(_:)` with `userInfo` for the value's `encode(to:)` to read (every encoder below the
  /// root answers with the root's).
  public func encode(_ value: some Encodable, userInfo: [CodingUserInfoKey: Any]) throws -> JSON {
    let root = ValueEncoder(parent: nil, key: nil)
    root.rootUserInfo = userInfo
    return try root.encodeValue(value)
  }
}

/// The `Encoder` behind ``JSONValueEncoder``: it holds what one value encoded (its container's
/// members live here, not in a box of their own).
///
/// A class, because containers handed out keep writing into it. Allocation is what costs in a
/// Codable encoder, so a parent keeps its last child once that child is free again (no container
/// of it survived) and encodes the next sibling with it: an array of 100,000 structs uses one
/// child encoder, not 100,000.
final class ValueEncoder: Encoder, SingleValueEncodingContainer {
  enum Kind { case empty, value, object, array }

  /// Unowned: a parent holds its spare child, so a strong reference back would be a cycle. A
  /// child is only used while its parent encodes (the top-level `encode` call holds the root).
  private unowned let parent: ValueEncoder?
  // Unchecked exclusivity: the runtime check on every access to a class's stored property
  // (swift_beginAccess) was a fifth of the encoder's time. Safe because an encoder is used by
  // one thread, inside one `encode` call, and no method here hands out an `inout` reference to
  // these properties that could overlap another access.
  @exclusivity(unchecked) private var key: (any CodingKey)?
  @exclusivity(unchecked) private var kind = Kind.empty
  @exclusivity(unchecked) private var single = JSON.null
  /// The members of an object container, built in place: one allocation per object.
  @exclusivity(unchecked) private var members = JSONObject()
  /// The elements of an array container.
  @exclusivity(unchecked) private var values: [JSON] = []
  /// Members or elements whose value a nested container or super encoder gives later.
  @exclusivity(unchecked) private var pending: [(position: Int, encoder: ValueEncoder)] = []
  /// How many members the last object here had: siblings usually have as many.
  @exclusivity(unchecked) private var expectedCount = 8
  @exclusivity(unchecked) private var spareChild: ValueEncoder?
  /// The root's `userInfo` (empty unless given to `JSONValueEncoder.encode(_:userInfo:)`).
  @exclusivity(unchecked) var rootUserInfo: [CodingUserInfoKey: Any] = [:]

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

  /// The root's, found up the parent chain: asked only by a type that looks for it.
  var userInfo: [CodingUserInfoKey: Any] {
    var encoder = self
    while let parent = encoder.parent { encoder = parent }
    return encoder.rootUserInfo
  }

  /// What was encoded, handed over (the encoder is empty afterwards and can be reused). A value
  /// that encoded nothing is an empty object, as Foundation does.
  func takeResult() -> JSON {
    defer { kind = .empty }
    switch kind {
    case .empty:
      pending = []
      return .object(JSONObject())
    case .value:
      pending = []
      defer { single = .null }
      return single
    case .object:
      var members = self.members
      self.members = JSONObject()
      for (position, encoder) in pending { members.setValue(encoder.takeResult(), at: position) }
      pending = []
      expectedCount = members.count
      members.finishEncoded()
      return .object(members)
    case .array:
      var values = self.values
      self.values = []
      for (position, encoder) in pending { values[position] = encoder.takeResult() }
      pending = []
      return .array(values)
    }
  }

  /// Encodes `value` (a child of this encoder at `key`, or the root) and returns its JSON.
  func encodeValue<T: Encodable>(_ value: T) throws -> JSON {
    if let special = try Self.special(value, at: self) { return special }
    try value.encode(to: self)
    return takeResult()
  }

  /// The JSON of `value` encoded as a member or element of this encoder's container.
  func encodeChild<T: Encodable>(_ value: T, key: any CodingKey) throws -> JSON {
    if let special = try Self.special(value, at: self) { return special }
    var child: ValueEncoder
    if let spare = spareChild {
      spareChild = nil
      spare.key = key
      child = spare
    } else {
      child = ValueEncoder(parent: self, key: key)
    }
    try value.encode(to: child)
    let result = child.takeResult()
    if isKnownUniquelyReferenced(&child) { spareChild = child }
    return result
  }

  /// A child whose value a nested container or super encoder fills after this call returns.
  func pendingChild(key: any CodingKey, kind: Kind) -> ValueEncoder {
    let child = ValueEncoder(parent: self, key: key)
    child.begin(kind)
    if self.kind == .object {
      pending.append((members.count, child))
      members.appendUnindexed(key.stringValue, .null)
    } else {
      pending.append((values.count, child))
      values.append(.null)
    }
    return child
  }

  /// Types with a JSON form of their own rather than their `Encodable` one.
  private static func special<T: Encodable>(_ value: T, at encoder: ValueEncoder) throws -> JSON? {
    if T.self == JSON.self, let json = value as? JSON { return json }
    if T.self == Date.self, let date = value as? Date { return EncodedDates.value(of: date) }
    if T.self == URL.self, let url = value as? URL { return .string(url.absoluteString) }
    if T.self == Data.self, let data = value as? Data {
      return .string(data.base64EncodedString())
    }
    return nil
  }

  /// Starts a container of `kind` here, unless one is already open (a type may ask twice).
  private func begin(_ kind: Kind) {
    guard self.kind != kind else { return }
    self.kind = kind
    values = []
    members = kind == .object ? JSONObject(reservingCapacity: expectedCount) : JSONObject()
  }

  func appendMember(_ key: String, _ value: JSON) { members.appendUnindexed(key, value) }

  func appendElement(_ value: JSON) { values.append(value) }

  var elementCount: Int { values.count }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    begin(.object)
    return KeyedEncodingContainer(ObjectEncodingContainer<Key>(encoder: self))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    begin(.array)
    return ArrayEncodingContainer(encoder: self)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer { self }

  // MARK: SingleValueEncodingContainer

  func encodeNil() throws { setSingle(.null) }
  func encode(_ value: Bool) throws { setSingle(.bool(value)) }
  func encode(_ value: String) throws { setSingle(Self.sharedValue(value)) }
  func encode(_ value: Double) throws { setSingle(try number(value, path: codingPath)) }
  func encode(_ value: Float) throws { setSingle(try number(value, path: codingPath)) }
  func encode(_ value: Int) throws { setSingle(.integer(Int64(value))) }
  func encode(_ value: Int8) throws { setSingle(.integer(Int64(value))) }
  func encode(_ value: Int16) throws { setSingle(.integer(Int64(value))) }
  func encode(_ value: Int32) throws { setSingle(.integer(Int64(value))) }
  func encode(_ value: Int64) throws { setSingle(.integer(value)) }
  func encode(_ value: UInt) throws { setSingle(try integer(value, path: codingPath)) }
  func encode(_ value: UInt8) throws { setSingle(.integer(Int64(value))) }
  func encode(_ value: UInt16) throws { setSingle(.integer(Int64(value))) }
  func encode(_ value: UInt32) throws { setSingle(.integer(Int64(value))) }
  func encode(_ value: UInt64) throws { setSingle(try integer(value, path: codingPath)) }
  func encode<T: Encodable>(_ value: T) throws { setSingle(try encodeValue(value)) }

  private func setSingle(_ value: JSON) {
    kind = .value
    single = value
  }

  /// `JSON`'s own `encode(to:)`: stored as it is.
  func encodeRaw(_ value: JSON) { setSingle(value) }

  /// `.string(value)` for a string encoded on its own: the box the thread's string table holds
  /// for the same bytes when there is one (``JSONStringCache``). This is the path of an enum's
  /// raw value (a status, a kind), which an encoded state repeats in every element and which
  /// was a box per element; a member's or an element's string (an id, a text, seldom repeated)
  /// is encoded by its container without the table.
  private static func sharedValue(_ value: String) -> JSON {
    guard value.utf8.count <= JSONStringCache.maximumLongLength else { return .string(value) }
    var value = value
    return value.withUTF8 { JSONStringCache.current.value(UnsafeRawBufferPointer($0)) }
  }
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
  // A Float widened bit for bit prints as 0.10000000149011612; go through its own shortest
  // text so it reads as the number that was meant (0.1), as Foundation's encoder does.
  if let float = value as? Float, let double = Double(float.description) { return .double(double) }
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

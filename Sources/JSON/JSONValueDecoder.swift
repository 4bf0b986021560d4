#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Decodes a `Decodable` value straight from `JSON`, with no text in between; a failure names
/// the offending field with a JSON Pointer and says what was expected.
///
/// Numbers: an integer type accepts a JSON integer in its range, and also a double with no
/// fraction (`2.0`, as some clients write every number); `Double`/`Float` accept integers and
/// doubles. `Date` reads ISO 8601 strings with or without fractional seconds (`Z` or an
/// offset); `URL` and `Data` (Base64) read strings; `JSON` takes the value as it is. Unknown
/// object members are ignored.
///
/// ```swift
/// struct SetQuantity: Decodable { var id: String; var quantity: Int }
/// let action = try JSONValueDecoder().decode(
///   SetQuantity.self, from: ["id": "sku-7", "quantity": 2])
/// ```
public struct JSONValueDecoder: Sendable {
  /// Whether an object member that the type does not read is an error (`unknown field`), at
  /// its pointer. Off by default (a snapshot written by an older version must still load); the
  /// server turns it on for actions, whose published schemas allow no other member.
  public var refusesUnknownKeys: Bool

  /// A decoder; it holds only its settings, so one can be shared freely.
  public init(refusesUnknownKeys: Bool = false) {
    self.refusesUnknownKeys = refusesUnknownKeys
  }

  /// Decodes a `T` from `json`, or says where and why it cannot.
  public func decode<T: Decodable>(_ type: T.Type, from json: JSON) throws(JSONDecodingError)
    -> T
  {
    let ledger = refusesUnknownKeys ? KeyLedger() : nil
    return try decode(
      T.self, with: ValueDecoder(value: json, parent: nil, key: nil, ledger: ledger))
  }

  /// Decodes a `T` from `json`, which it consumes: the arrays and objects inside are handed
  /// over to the values decoded from them, and an array's elements are let go one by one as
  /// each is decoded, so the tree shrinks while the value grows (a large state's open no
  /// longer holds the whole parsed tree and the whole decoded state at once). The same values
  /// and the same errors as ``decode(_:from:)``.
  ///
  /// A member holding an array or an object is taken out of its object when read (only when
  /// that object is held here alone): a type whose `init(from:)` reads such a member twice is
  /// told so by an error at the member, not given `null`.
  public func decode<T: Decodable>(_ type: T.Type, consuming json: consuming JSON)
    throws(JSONDecodingError) -> T
  {
    let ledger = refusesUnknownKeys ? KeyLedger() : nil
    let root = ValueDecoder(value: json, parent: nil, key: nil, ledger: ledger, consumes: true)
    // Arrays of the message left as text are read where the tree holds their stand-ins.
    guard let deferred = DeferredArrays.current else { return try decode(T.self, with: root) }
    root.deferred = deferred
    let value = try decode(T.self, with: root)
    // An array nothing read is checked now, before anything is done with the value.
    guard deferred.isWellFormed() else {
      throw JSONDecodingError(DeferredArrayError.malformed, at: [])
    }
    deferred.letGoOfText()
    return value
  }

  /// The root `decoder`'s `T`, with the unknown keys its ledger found (when it keeps one).
  private func decode<T: Decodable>(_ type: T.Type, with decoder: ValueDecoder)
    throws(JSONDecodingError) -> T
  {
    let value: T
    do {
      value = try decoder.decodeValue(T.self)
    } catch {
      _ = decoder.ledger?.finish()
      throw JSONDecodingError(error, at: [])
    }
    if let unknown = decoder.ledger?.finish() { throw unknown }
    return value
  }
}

/// The `Decoder` behind ``JSONValueDecoder``: one instance per nested value, linked to its
/// parent so the coding path (and the pointer) is only built when something fails.
final class ValueDecoder: Decoder, SingleValueDecodingContainer {
  /// The value decoded; in a consuming decode, members taken out of it are `null` here.
  var value: JSON
  // Variables only for ``child(of:key:)``, which reuses a child decoder for the next child.
  private var parent: ValueDecoder?
  // Not checked for exclusive access at run time (the check cost a reused child more than
  // the rest of its reset): it is written only by `child(of:key:)`, on a decoder that nothing
  // else holds at that moment (parked, so uniquely referenced), and otherwise only read, by
  // `codingPath`, on the thread of the decode; no access to it can overlap another.
  @exclusivity(unchecked) private var key: (any CodingKey)?
  /// Set for a strict decode (``JSONValueDecoder/refusesUnknownKeys``), shared by the tree.
  let ledger: KeyLedger?
  /// Where the keyed container over this decoder's object looks for the next member first
  /// (the one after the member it found last); only a hint, checked before it is used.
  var nextMember = 0
  /// Whether the decode owns its tree and hands its parts over as they are read
  /// (``JSONValueDecoder/decode(_:consuming:)``).
  let consumes: Bool
  /// In a consuming decode: the positions of this object's members taken out, so that a
  /// second read of one is an error rather than a `null` (bit `p` for a position `p` below 63,
  /// ``takenBeyond`` past it, with bit 63 set); or, for an array, that its elements were
  /// handed to a container (bit 0). Bits rather than an array of positions: every member read
  /// checks them, and an array stored in a class is checked for exclusive access at run time
  /// on each use, which the decode of every member paid.
  private(set) var takenMask: UInt64 = 0
  private var takenBeyond: [Int] = []
  /// The child decoder made last, kept to decode the next child (``child(of:key:)``).
  private var spare: ValueDecoder?
  /// The arrays of the message left as text, in a consuming decode of a state they belong to
  /// (``DeferredArrays``); each child has its parent's.
  var deferred: DeferredArrays?
  /// The array of `deferred` this decoder's value stands for.
  var deferredIndex: Int?

  init(
    value: consuming JSON, parent: ValueDecoder?, key: (any CodingKey)?,
    ledger: KeyLedger? = nil, consumes: Bool = false
  ) {
    self.value = value
    self.parent = parent
    self.key = key
    self.ledger = ledger ?? parent?.ledger
    self.consumes = consumes || parent?.consumes == true
    self.deferred = parent?.deferred
  }

  var codingPath: [any CodingKey] {
    var path: [any CodingKey] = []
    var decoder: ValueDecoder? = self
    while let current = decoder, let key = current.key {
      path.append(key)
      decoder = current.parent
    }
    return path.reversed()
  }

  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
    if let special = try special(T.self, from: value, key: nil) { return special }
    return try construct(T.self, from: self)
  }

  /// `T(from:)`; a raw-value enum's refusal of a value it does not know is said in wire terms
  /// (Swift's own words are "Cannot initialize Keep from invalid String value mine").
  private func construct<T: Decodable>(_ type: T.Type, from decoder: ValueDecoder) throws -> T {
    do {
      return try T(from: decoder)
    } catch DecodingError.dataCorrupted(let context)
      where T.self is any RawRepresentable.Type
      && context.codingPath.count == decoder.codingPath.count
    {
      let found = WireExpectation.found(decoder.value)
      guard let values = WireExpectation.rawValues(of: T.self) else {
        throw decoder.failure(at: nil, "unknown value \(found)")
      }
      throw decoder.failure(
        at: nil, "expected one of: \(values.joined(separator: ", ")), found \(found)")
    }
  }

  /// Decodes `value`, found at `key` of this decoder's container. An error that is not already
  /// located (a type's own validation in `init(from:)`) is placed at the child's path.
  func decodeChild<T: Decodable>(_ type: T.Type, from value: consuming JSON, key: any CodingKey)
    throws -> T
  {
    // Asked first, by comparing types, and decoded in a function of its own: `special` returns
    // a `T?`, whose type the runtime looks up on each call; bound here, its room was made (and
    // the type looked up, twice) on every call, which every element of a large array paid.
    if Self.hasOwnForm(T.self) { return try ownForm(T.self, from: value, key: key) }
    var child = child(of: value, key: key)
    do {
      let decoded = try construct(T.self, from: child)
      park(&child)
      return decoded
    } catch let error as JSONDecodingError {
      throw error
    } catch {
      throw JSONDecodingError(error, at: child.codingPath)
    }
  }

  /// The array of ``deferred`` that `value`, this decoder's member `key`, stands for (an empty
  /// array at the place of one), taken for reading; nil for any other value.
  func deferredArray(standingFor value: JSON, at key: any CodingKey) -> Int? {
    guard let deferred, case .array(let elements) = value, elements.isEmpty else { return nil }
    return deferred.take(at: codingPath.map(\.stringValue) + [key.stringValue])
  }

  /// ``decodeChild(_:from:key:)`` of the deferred array `index`: from its text by a type that
  /// reads it as an array (``ParallelArrayDecodable``), from its parsed tree by any other.
  func decodeChild<T: Decodable>(_ type: T.Type, deferred index: Int, key: any CodingKey)
    throws -> T
  {
    guard deferred != nil else { throw failure(at: key, "no text for a deferred array") }
    guard T.self is any ParallelArrayDecodable.Type else {
      return try decodeChild(T.self, from: tree(ofDeferred: index, at: key), key: key)
    }
    let child = ValueDecoder(value: .array([]), parent: self, key: key)
    child.deferredIndex = index
    do {
      return try construct(T.self, from: child)
    } catch let error as JSONDecodingError {
      throw error
    } catch {
      throw JSONDecodingError(error, at: child.codingPath)
    }
  }

  /// The deferred array `index`, the member `key`, parsed into a tree.
  func tree(ofDeferred index: Int, at key: any CodingKey) throws -> JSON {
    guard let deferred else { throw failure(at: key, "no text for a deferred array") }
    do {
      return try deferred.tree(of: index)
    } catch {
      throw JSONDecodingError(error, at: codingPath + [key])
    }
  }

  /// A decoder of `value` at `key` under this one: the child parked last (``park(_:)``), its
  /// value, key and reading state set anew, or a new one.
  ///
  /// Every element of an array of structs (and every member of a struct that a type decodes
  /// itself, such as an enum's raw value) needs a decoder; a new one per element was an
  /// allocation, its initialization, its release and its free. (A strict decode's ledger
  /// holds the decoder of each object it tracks, and a child holds its parent: such decoders
  /// are never parked, so the paths the ledger reports at the end are still theirs.)
  private func child(of value: consuming JSON, key: any CodingKey) -> ValueDecoder {
    guard let reused = spare else { return ValueDecoder(value: value, parent: self, key: key) }
    // Taken out while in use: a decode that comes back here before this child is parked again
    // makes a new one.
    spare = nil
    reused.value = value
    reused.key = key
    reused.parent = self
    reused.nextMember = 0
    if reused.takenMask != 0 { reused.clearTaken() }
    return reused
  }

  /// Keeps `child`, whose value was decoded, as the next child's decoder, when nothing but the
  /// caller holds it: a type that kept the decoder, or a container of it (which holds it), is
  /// never given it again, and it keeps its value and its path as they were. A parked child
  /// lets its value go at once (in a consuming decode, the part of the tree just decoded), and
  /// its parent: a parked child holding this decoder, which holds the child, would be a cycle
  /// never freed; it gets its parent back when it is reused.
  private func park(_ child: inout ValueDecoder) {
    guard isKnownUniquelyReferenced(&child) else { return }
    child.value = .null
    child.parent = nil
    spare = child
  }

  /// Whether `special` decodes `T`.
  @inline(__always)
  private static func hasOwnForm<T>(_ type: T.Type) -> Bool {
    T.self == JSON.self || T.self == Date.self || T.self == URL.self || T.self == Data.self
  }

  /// `special` of a type that has its own form (``hasOwnForm(_:)``), without its `T?`: the
  /// optional's type was looked up by the runtime on each call (a date of every element of a
  /// large array). Each value is `T` itself, as the comparison before it says, so the cast
  /// changes nothing.
  @inline(never)
  private func ownForm<T: Decodable>(_ type: T.Type, from value: JSON, key: any CodingKey)
    throws -> T
  {
    if T.self == Date.self {
      guard case .string(let text) = value, let date = ISO8601Date.date(from: text) else {
        throw failure(at: key, Self.dateExpectation + found(value))
      }
      return unsafeBitCast(date, to: T.self)
    }
    if T.self == JSON.self { return unsafeBitCast(value, to: T.self) }
    return try otherForm(T.self, from: value, key: key)
  }

  /// `URL` and `Data`: rare enough to pay for the `T?` (in a function of its own, so that
  /// `ownForm` does not make room for one).
  @inline(never)
  private func otherForm<T: Decodable>(_ type: T.Type, from value: JSON, key: any CodingKey)
    throws -> T
  {
    guard let decoded = try special(T.self, from: value, key: key) else {
      throw failure(at: key, "expected \(WireExpectation.of(T.self)), found " + found(value))
    }
    return decoded
  }

  private static let dateExpectation =
    "expected an ISO 8601 date string such as \"2026-11-29T17:46:39Z\", found "

  /// Types with a JSON form of their own rather than their `Decodable` one.
  @inline(never)
  private func special<T: Decodable>(_ type: T.Type, from value: JSON, key: (any CodingKey)?)
    throws -> T?
  {
    if T.self == JSON.self { return value as? T }
    if T.self == Date.self {
      guard case .string(let text) = value, let date = ISO8601Date.date(from: text) else {
        throw failure(at: key, Self.dateExpectation + found(value))
      }
      return date as? T
    }
    if T.self == URL.self {
      guard case .string(let text) = value, let url = URL(string: text) else {
        throw failure(at: key, "expected a URL string, found " + found(value))
      }
      return url as? T
    }
    if T.self == Data.self {
      guard case .string(let text) = value, let data = Data(base64Encoded: text) else {
        throw failure(at: key, "expected a Base64 string, found " + found(value))
      }
      return data as? T
    }
    return nil
  }

  // MARK: Members taken out (a consuming decode)

  /// Whether the member at `position` was taken out already.
  func isTaken(_ position: Int) -> Bool {
    guard takenMask != 0 else { return false }
    if position < 63 { return takenMask & (1 << UInt64(position)) != 0 }
    return takenMask & (1 << 63) != 0 && takenBeyond.contains(position)
  }

  /// Notes that the member at `position` was taken out.
  func markTaken(_ position: Int) {
    if position < 63 {
      takenMask |= 1 << UInt64(position)
    } else {
      takenMask |= 1 << 63
      takenBeyond.append(position)
    }
  }

  private func clearTaken() {
    if takenMask & (1 << 63) != 0 { takenBeyond.removeAll(keepingCapacity: true) }
    takenMask = 0
  }

  // MARK: Errors

  /// A failure of the value at `key` of this decoder (or of this decoder's value, for `nil`).
  func failure(at key: (any CodingKey)?, _ reason: String) -> JSONDecodingError {
    var path = codingPath
    if let key { path.append(key) }
    return JSONDecodingError(pointer: JSONDecodingError.pointer(path), reason: reason)
  }

  /// The value as the end of "expected ..., found ...".
  func found(_ value: JSON) -> String {
    switch value {
    case .double(let double): return "\(double)"
    default: return value.kindDescription
    }
  }

  // MARK: Scalars, shared by the three kinds of container

  func bool(_ value: JSON, at key: (any CodingKey)?) throws -> Bool {
    guard case .bool(let flag) = value else {
      throw failure(at: key, "expected a boolean, found " + found(value))
    }
    return flag
  }

  func string(_ value: JSON, at key: (any CodingKey)?) throws -> String {
    guard case .string(let string) = value else {
      throw failure(at: key, "expected a string, found " + found(value))
    }
    return string
  }

  func integer<I: FixedWidthInteger>(_ type: I.Type, _ value: JSON, at key: (any CodingKey)?)
    throws -> I
  {
    switch value {
    case .integer(let integer):
      if let exact = I(exactly: integer) { return exact }
      throw failure(
        at: key, "expected an integer from \(I.min) through \(I.max) (\(I.self)), found \(integer)")
    case .double(let double) where double.rounded(.towardZero) == double:
      if let exact = I(exactly: double) { return exact }
      throw failure(
        at: key, "expected an integer from \(I.min) through \(I.max) (\(I.self)), found \(double)")
    default:
      throw failure(at: key, "expected an integer, found " + found(value))
    }
  }

  func floatingPoint<F: BinaryFloatingPoint>(
    _ type: F.Type, _ value: JSON, at key: (any CodingKey)?
  ) throws -> F {
    switch value {
    case .double(let double):
      let converted = F(double)
      if converted.isFinite { return converted }
      throw failure(at: key, "expected a number in the range of \(F.self), found \(double)")
    case .integer(let integer):
      return F(integer)
    default:
      throw failure(at: key, "expected a number, found " + found(value))
    }
  }

  // MARK: Decoder

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    guard case .object = value else {
      throw failure(at: nil, "expected an object, found " + found(value))
    }
    var asked: KeyLedger.Entry?
    if let ledger, case .object(let object) = value {
      asked = ledger.track(object, decoder: self)
    }
    return KeyedDecodingContainer(ObjectDecodingContainer<Key>(decoder: self, asked: asked))
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    guard case .array(let elements) = value else {
      throw failure(at: nil, "expected an array, found " + found(value))
    }
    guard consumes else { return ArrayDecodingContainer(elements: elements, decoder: self) }
    // Handed over: the container is then the elements' only holder and lets each go once
    // it is decoded.
    guard takenMask == 0 else {
      throw failure(at: nil, "the array was already read once (this decode consumes it)")
    }
    markTaken(0)
    value = .array([])
    return ArrayDecodingContainer(elements: elements, decoder: self, consumes: true)
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

  // MARK: SingleValueDecodingContainer

  func decodeNil() -> Bool { value.isNull }
  func decode(_ type: Bool.Type) throws -> Bool { try bool(value, at: nil) }
  func decode(_ type: String.Type) throws -> String { try string(value, at: nil) }
  func decode(_ type: Double.Type) throws -> Double { try floatingPoint(type, value, at: nil) }
  func decode(_ type: Float.Type) throws -> Float { try floatingPoint(type, value, at: nil) }
  func decode(_ type: Int.Type) throws -> Int { try integer(type, value, at: nil) }
  func decode(_ type: Int8.Type) throws -> Int8 { try integer(type, value, at: nil) }
  func decode(_ type: Int16.Type) throws -> Int16 { try integer(type, value, at: nil) }
  func decode(_ type: Int32.Type) throws -> Int32 { try integer(type, value, at: nil) }
  func decode(_ type: Int64.Type) throws -> Int64 { try integer(type, value, at: nil) }
  func decode(_ type: UInt.Type) throws -> UInt { try integer(type, value, at: nil) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type, value, at: nil) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type, value, at: nil) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type, value, at: nil) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type, value, at: nil) }
  func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(type) }
}

/// The members of a JSON object: keys in insertion order, looked up by hash once the object is
/// larger than a handful of keys.
///
/// Two objects are equal when they have the same members, whatever their order (RFC 8259).
/// Copies share storage until one of them is written, like Swift's own collections.
///
/// ```swift
/// var object: JSONObject = ["id": "sku-7", "quantity": 2]
/// object["quantity"] = 3
/// for (key, value) in object.members { print(key, value) }
/// ```
///
/// `@unchecked Sendable` (its buffer class cannot be `Sendable`: `ManagedBuffer` forbids it) is
/// sound because the buffer is only ever written by this struct's mutating methods, and each of
/// them first calls `makeUnique`, which copies the buffer unless `isKnownUniquelyReferenced`
/// says this value holds the only reference. A buffer another value (so possibly another
/// thread) can see is therefore only read, never written; the one value that owns a uniquely
/// referenced buffer is under Swift's exclusive access rules while it mutates, and the
/// reference count itself is atomic. ``Members`` only reads.
public struct JSONObject: @unchecked Sendable {
  /// One member: a key and its value.
  public typealias Member = (key: String, value: JSON)

  /// All members live in one tail-allocated buffer behind one reference: a `JSON` value stays
  /// two words, and an object costs one allocation (JSONObjectStorage.swift).
  private var storage: JSONObjectStorage

  /// Up to this many keys a lookup scans; past it the buffer keeps a key index.
  package static let linearLimit = 8

  /// An empty object; allocates nothing until a member is added.
  public init() {
    storage = JSONObjectStorage.empty
  }

  /// An empty object with room for `capacity` members before it reallocates.
  public init(reservingCapacity capacity: Int) {
    storage = capacity > 0 ? JSONObjectStorage.make(capacity: capacity) : JSONObjectStorage.empty
  }

  /// Builds an object from members in order; a repeated key keeps its first position and its
  /// last value.
  public init<S: Sequence>(_ members: S) where S.Element == (String, JSON) {
    self.init(reservingCapacity: members.underestimatedCount)
    for (key, value) in members { self[key] = value }
  }

  /// Members whose keys are known to be distinct, in order; skips the per-key duplicate
  /// lookups of `init(_:)`.
  init(distinctKeys keys: [String], values: [JSON]) {
    precondition(keys.count == values.count, "one value per key")
    self.init(reservingCapacity: keys.count)
    for position in keys.indices { storage.append(keys[position], values[position]) }
    if keys.count > Self.linearLimit { storage.reindex() }
  }

  /// Whether `self` and `other` are the same members buffer, so necessarily equal. `false`
  /// says nothing.
  func sharesStorage(with other: JSONObject) -> Bool { storage === other.storage }

  /// Makes the buffer unique and able to hold `needed` members: copied when shared (copy on
  /// write), moved to a buffer twice as large when full.
  @inline(__always)
  private mutating func makeUnique(capacity needed: Int) {
    if isKnownUniquelyReferenced(&storage) {
      if needed > storage.memberCapacity {
        storage = storage.moved(capacity: Swift.max(needed, 2 * storage.memberCapacity, 4))
      }
    } else {
      let count = storage.count
      let capacity = needed > count ? Swift.max(needed, 2 * count, 4) : count
      storage = storage.copied(capacity: capacity)
    }
  }

  /// The number of members.
  public var count: Int { storage.count }
  /// Whether the object has no members.
  public var isEmpty: Bool { storage.count == 0 }

  /// The keys, in insertion order (a new array: prefer ``members`` or ``key(at:)`` in loops).
  public var keys: [String] { storage.withMembers { $0.map(\.key) } }
  /// The values, in the order of ``keys`` (a new array: prefer ``members`` or ``value(at:)``).
  public var values: [JSON] { storage.withMembers { $0.map(\.value) } }

  /// The position of `key`, or `nil` when the object has no such member.
  @inline(__always)
  public func position(of key: String) -> Int? { storage.position(of: key) }

  /// The key at `position` (`0..<count`), as ``position(of:)`` gives it.
  public func key(at position: Int) -> String {
    precondition(position >= 0 && position < count, "JSONObject position out of range")
    return storage.withMembers { $0[position].key }
  }

  /// The value at `position` (`0..<count`): `object.value(at: object.position(of: k)!)`.
  public func value(at position: Int) -> JSON {
    precondition(position >= 0 && position < count, "JSONObject position out of range")
    return storage.withMembers { $0[position].value }
  }

  /// The position of member `key` and its value, or `nil` when there is no such member, for a
  /// caller that keeps the object in a class's stored `var`. Declared `mutating`, though it
  /// changes nothing, so that such a caller lends the object where it lies: a non-mutating
  /// call copied it out of the property first, a retain and a release (the walk of a
  /// published view, per member). `package`: a tool of this package's own hot paths, not an
  /// API for users of the JSON library, to whom `object[key]` says the same.
  package mutating func lookUpInPlace(_ key: String) -> (position: Int, value: JSON)? {
    guard let position = storage.position(of: key) else { return nil }
    return (position, storage.withMembers { $0[position].value })
  }

  /// The member at `position` (`0..<count`).
  public func member(at position: Int) -> Member {
    precondition(position >= 0 && position < count, "JSONObject position out of range")
    return storage.withMembers { $0[position] }
  }

  /// The value of `key`; setting `nil` removes the member, setting a new key appends it.
  public subscript(key: String) -> JSON? {
    get { storage.position(of: key).map { value(at: $0) } }
    set {
      if let newValue { set(key, newValue) } else { removeValue(forKey: key) }
    }
  }

  /// Sets `key` to `value`, keeping its position when it exists and appending it otherwise.
  public mutating func set(_ key: String, _ value: JSON) {
    if let position = storage.position(of: key) {
      setValue(value, at: position)
    } else {
      appendNew(key, value)
    }
  }

  /// Replaces the value at `position` (`0..<count`), keeping its key and position.
  public mutating func setValue(_ value: JSON, at position: Int) {
    precondition(position >= 0 && position < count, "JSONObject position out of range")
    makeUnique(capacity: storage.count)
    storage.withMutableMembers { $0[position].value = value }
  }

  /// Replaces the value at `position` (`0..<count`) and returns the value it held, moved out
  /// rather than copied: for an edit that keeps the old value (an undo entry) or drops it.
  mutating func exchangeValue(_ value: consuming JSON, at position: Int) -> JSON {
    precondition(position >= 0 && position < count, "JSONObject position out of range")
    makeUnique(capacity: storage.count)
    var exchanged = value
    storage.withMutableMembers { members in swap(&exchanged, &members[position].value) }
    return exchanged
  }

  /// Whether this value is its members' only holder, so an edit changes them in place.
  mutating func isUniquelyHeld() -> Bool { isKnownUniquelyReferenced(&storage) }

  /// Appends a member whose key the object does not hold yet (unchecked: the caller knows).
  mutating func appendNew(_ key: String, _ value: JSON) {
    let position = storage.count
    makeUnique(capacity: position + 1)
    storage.append(key, value)
    storage.indexAppended(key, at: position)
  }

  /// Appends a member without touching the key index: for building an object from members
  /// known to be distinct, ended by ``reindex()`` (or ``finishEncoded()``).
  @inline(__always)
  package mutating func appendUnindexed(_ key: consuming String, _ value: consuming JSON) {
    makeUnique(capacity: storage.count + 1)
    storage.append(key, value)
  }

  /// Rebuilds the key index after ``appendUnindexed(_:_:)`` calls.
  mutating func reindex() {
    guard storage.count > Self.linearLimit || storage.hasIndex else { return }
    makeUnique(capacity: storage.count)
    storage.reindex()
  }

  /// Ends building an object from an `Encodable`'s members (appended unindexed in encoding
  /// order). A key encoded twice (never by synthesized code) keeps its first position and its
  /// last value, as `init(_:)` does.
  mutating func finishEncoded() {
    guard storage.count > 1 else { return }
    makeUnique(capacity: storage.count)
    guard storage.indexReportingDuplicates() else { return }
    self = JSONObject(members.lazy.map { ($0.key, $0.value) })
  }

  /// Removes `key` and returns its value; later members keep their relative order.
  @discardableResult
  public mutating func removeValue(forKey key: String) -> JSON? {
    guard let position = storage.position(of: key) else { return nil }
    makeUnique(capacity: storage.count)
    let removed = storage.remove(at: position)
    storage.reindex()
    return removed.value
  }

  /// Members in order, as `(key, value)` pairs; reading them allocates nothing.
  public var members: Members { Members(storage: storage) }

  /// The members of an object as a collection indexed by position, sharing its buffer.
  ///
  /// `@unchecked Sendable` for the reason ``JSONObject`` is: it only reads a buffer that a
  /// writer would copy first (it holds a reference, so the buffer is not unique).
  public struct Members: RandomAccessCollection, @unchecked Sendable {
    fileprivate let storage: JSONObjectStorage

    /// `0`.
    public var startIndex: Int { 0 }
    /// The member count.
    public var endIndex: Int { storage.count }

    /// The member at `position`.
    public subscript(position: Int) -> Member {
      precondition(position >= 0 && position < storage.count, "JSONObject position out of range")
      return storage.withMembers { $0[position] }
    }
  }

  /// Runs `body` on the members in place, without copying them out (hot paths in this
  /// module: the writer, equality, diffing). The buffer is valid only inside `body`.
  @inline(__always)
  func withMembers<Result, Failure: Error>(
    _ body: (UnsafeBufferPointer<Member>) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    try storage.withMembers(body)
  }

  /// Whether both objects have the same keys in the same order.
  func hasSameKeys(as other: JSONObject) -> Bool {
    guard count == other.count else { return false }
    return withMembers { lhs in
      other.withMembers { rhs in
        for position in lhs.indices where lhs[position].key != rhs[position].key {
          return false
        }
        return true
      }
    }
  }
}

extension JSONObject: Equatable {
  /// Same members, whatever their order.
  public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
    if lhs.sharesStorage(with: rhs) { return true }
    guard lhs.count == rhs.count else { return false }
    // Keys are distinct and the counts match, so every member of `lhs` found equal in `rhs`
    // means the same members. Most objects compared have the same key order: try the same
    // position first, then look the key up.
    return lhs.withMembers { left in
      rhs.withMembers { right in
        for position in left.indices {
          let (key, value) = left[position]
          if right[position].key == key {
            guard right[position].value == value else { return false }
          } else {
            guard let at = rhs.position(of: key), right[at].value == value else { return false }
          }
        }
        return true
      }
    }
  }
}

extension JSONObject: Hashable {
  /// Order-independent, to agree with `==`: each member is hashed alone and the results are
  /// combined with a commutative sum.
  public func hash(into hasher: inout Hasher) {
    let sum = withMembers { members in
      var sum = 0
      for (key, value) in members {
        var member = Hasher()
        member.combine(key)
        member.combine(value)
        sum &+= member.finalize()
      }
      return sum
    }
    hasher.combine(count)
    hasher.combine(sum)
  }
}

extension JSONObject: ExpressibleByDictionaryLiteral {
  /// `["a": 1, "b": 2]`, keys in the literal's order.
  public init(dictionaryLiteral elements: (String, JSON)...) {
    self.init(elements)
  }
}

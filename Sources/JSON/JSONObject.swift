/// The members of a JSON object: keys in insertion order, looked up by hash once the object is
/// larger than a handful of keys.
///
/// Two objects are equal when they have the same members, whatever their order (RFC 8259).
/// Copies share storage until one of them is written, like Swift's own collections.
public struct JSONObject: Sendable {
  /// The members live behind one reference, so a `JSON` value is 24 bytes rather than 32: an
  /// array of them is a quarter smaller, and walking it (diffing a large array) a quarter faster.
  private var storage: Storage

  /// The keys, in insertion order.
  public var keys: [String] { storage.keys }
  /// The values, in the order of `keys`.
  public var values: [JSON] { storage.values }

  private static let linearLimit = 8

  /// An empty object.
  public init() {
    storage = Storage.empty
  }

  /// Builds an object from members in order; a repeated key keeps its first position and its
  /// last value.
  public init<S: Sequence>(_ members: S) where S.Element == (String, JSON) {
    self.init()
    for (key, value) in members { self[key] = value }
  }

  /// Members whose keys are known to be distinct (the parser's output), in order; skips the
  /// per-key duplicate lookups of `init(_:)`.
  init(distinctKeys keys: [String], values: [JSON]) {
    storage = Storage(keys: keys, values: values, index: nil)
    if keys.count > Self.linearLimit { storage.rebuildIndex() }
  }

  private init(keys: [String], values: [JSON], index: [String: Int]?) {
    storage = Storage(keys: keys, values: values, index: index)
  }

  /// Members in the order an `Encodable` encoded them. A key encoded twice (never by synthesized
  /// code) keeps its first position and its last value, as `init(_:)` does.
  init(encodedKeys keys: [String], values: [JSON]) {
    var distinct = true
    if keys.count <= Self.linearLimit {
      for position in keys.indices.dropFirst() where keys[..<position].contains(keys[position]) {
        distinct = false
        break
      }
      if distinct {
        self.init(distinctKeys: keys, values: values)
        return
      }
    } else {
      var built = [String: Int](minimumCapacity: keys.count)
      for (position, key) in keys.enumerated() where built.updateValue(position, forKey: key) != nil
      {
        distinct = false
        break
      }
      if distinct {
        self.init(keys: keys, values: values, index: built)
        return
      }
    }
    self.init(zip(keys, values))
  }

  /// Whether `self` and `other` are the same members buffer, so necessarily equal. `false`
  /// says nothing.
  func sharesStorage(with other: JSONObject) -> Bool { storage === other.storage }

  /// The storage, copied first when another object shares it (copy on write).
  private mutating func uniqueStorage() -> Storage {
    if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    return storage
  }

  /// The number of members.
  public var count: Int { keys.count }
  /// Whether the object has no members.
  public var isEmpty: Bool { keys.isEmpty }

  /// The position of `key`, or `nil` when the object has no such member.
  public func position(of key: String) -> Int? {
    let storage = storage
    if let index = storage.index { return index[key] }
    return storage.keys.firstIndex(of: key)
  }

  /// The value of `key`; setting `nil` removes the member, setting a new key appends it.
  public subscript(key: String) -> JSON? {
    get { position(of: key).map { storage.values[$0] } }
    set {
      if let newValue { set(key, newValue) } else { removeValue(forKey: key) }
    }
  }

  /// Sets `key` to `value`, keeping its position when it exists and appending it otherwise.
  public mutating func set(_ key: String, _ value: JSON) {
    let at = position(of: key)
    let storage = uniqueStorage()
    if let at {
      storage.values[at] = value
      return
    }
    storage.keys.append(key)
    storage.values.append(value)
    if storage.index != nil {
      storage.index?[key] = storage.keys.count - 1
    } else if storage.keys.count > Self.linearLimit {
      storage.rebuildIndex()
    }
  }

  /// Removes `key` and returns its value; later members keep their relative order.
  @discardableResult
  public mutating func removeValue(forKey key: String) -> JSON? {
    guard let at = position(of: key) else { return nil }
    let storage = uniqueStorage()
    storage.keys.remove(at: at)
    let removed = storage.values.remove(at: at)
    if storage.keys.count > Self.linearLimit { storage.rebuildIndex() } else { storage.index = nil }
    return removed
  }

  /// Members in order, as `(key, value)` pairs.
  public var members: Zip2Sequence<[String], [JSON]> { zip(keys, values) }

}

extension JSONObject {
  /// The members buffer of an object.
  ///
  /// `@unchecked Sendable` is sound because a `Storage` is only ever mutated through
  /// `uniqueStorage()`, which copies it first unless `isKnownUniquelyReferenced` says the
  /// mutating `JSONObject` holds the only reference. A storage that another value (and so
  /// possibly another thread) can see is therefore never written, and the one `JSONObject`
  /// that owns a uniquely referenced storage is itself under Swift's exclusive access rules
  /// while it mutates. The shared `empty` instance is never uniquely referenced by an object
  /// (the static holds it too), so it is never written either.
  fileprivate final class Storage: @unchecked Sendable {
    var keys: [String]
    var values: [JSON]
    /// Key to position; only built past `linearLimit` keys, where hashing beats a scan.
    var index: [String: Int]?

    static let empty = Storage(keys: [], values: [], index: nil)

    init(keys: [String], values: [JSON], index: [String: Int]?) {
      self.keys = keys
      self.values = values
      self.index = index
    }

    func copy() -> Storage { Storage(keys: keys, values: values, index: index) }

    func rebuildIndex() {
      var built = [String: Int](minimumCapacity: keys.count)
      for (i, key) in keys.enumerated() { built[key] = i }
      index = built
    }
  }
}

extension JSONObject: Equatable {
  /// Same members, whatever their order.
  public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
    if lhs.sharesStorage(with: rhs) { return true }
    guard lhs.count == rhs.count else { return false }
    if lhs.keys == rhs.keys { return lhs.values == rhs.values }
    for (key, value) in lhs.members {
      guard let other = rhs[key], other == value else { return false }
    }
    return true
  }
}

extension JSONObject: Hashable {
  /// Order-independent, to agree with `==`: each member is hashed alone and the results are
  /// combined with a commutative sum.
  public func hash(into hasher: inout Hasher) {
    var sum = 0
    for (key, value) in members {
      var member = Hasher()
      member.combine(key)
      member.combine(value)
      sum &+= member.finalize()
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

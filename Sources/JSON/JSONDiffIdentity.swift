// Equality without a walk: two arrays (or objects) that share their storage buffer are equal.
//
// A store publishes a new state that is mostly the old one: untouched collections are the very
// same buffers (copy-on-write only copies what is written). Comparing buffer addresses decides
// those subtrees in constant time, which is what makes diffing a large, barely changed state
// cost in proportion to the change.

extension JSON {
  /// Whether `a` and `b` are the same buffer (so necessarily equal). `false` says nothing.
  static func sharesStorage(_ a: [JSON], _ b: [JSON]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    // `withUnsafeBufferPointer` on a native array only reads its buffer address.
    return a.withUnsafeBufferPointer { lhs in
      b.withUnsafeBufferPointer { rhs in lhs.baseAddress == rhs.baseAddress }
    }
  }

  /// Whether both objects share their key and value buffers (so are necessarily equal).
  static func sharesStorage(_ a: JSONObject, _ b: JSONObject) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    let sameKeys = a.keys.withUnsafeBufferPointer { lhs in
      b.keys.withUnsafeBufferPointer { rhs in lhs.baseAddress == rhs.baseAddress }
    }
    return sameKeys && sharesStorage(a.values, b.values)
  }

  /// Structural equality (`==`, so `1` and `1.0` differ) with the shared-storage shortcut
  /// tried first at the top, where it pays most.
  static func same(_ a: JSON, _ b: JSON) -> Bool {
    switch (a, b) {
    case (.array(let x), .array(let y)):
      return sharesStorage(x, y) || x == y
    case (.object(let x), .object(let y)):
      return sharesStorage(x, y) || x == y
    default:
      return a == b
    }
  }
}

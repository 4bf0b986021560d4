extension JSON {
  /// Equality as RFC 6902's `test` defines it: numbers by mathematical value (`1` equals
  /// `1.0`), objects by members regardless of order, arrays element by element.
  ///
  /// Differs from `==`, which keeps integers and doubles apart so that a diff notices a
  /// change of type.
  ///
  /// ```swift
  /// JSON.integer(1).equalsByValue(.double(1.0))  // true
  /// JSON.integer(1) == .double(1.0)               // false
  /// ```
  public func equalsByValue(_ other: JSON) -> Bool {
    switch (self, other) {
    case (.null, .null): return true
    case (.bool(let a), .bool(let b)): return a == b
    case (.string(let a), .string(let b)): return a == b
    case (.integer(let a), .integer(let b)): return a == b
    case (.double(let a), .double(let b)): return a == b
    case (.integer(let integer), .double(let double)), (.double(let double), .integer(let integer)):
      // Exact: 2^53 + 1 as an integer is not the double 2^53, although converting the integer
      // to a double would say so. (Truncating conversion instead of `Int64(exactly:)`, which
      // calls libm's rounding functions that this target does not link.)
      guard double >= -0x1p63, double < 0x1p63 else { return false }
      let truncated = Int64(double)
      return Double(truncated) == double && truncated == integer
    case (.array(let a), .array(let b)):
      guard a.count == b.count else { return false }
      if JSON.sharesStorage(a, b) { return true }
      for index in a.indices where !a[index].equalsByValue(b[index]) { return false }
      return true
    case (.object(let a), .object(let b)):
      guard a.count == b.count else { return false }
      if JSON.sharesStorage(a, b) { return true }
      for (key, value) in a.members {
        guard let other = b[key], value.equalsByValue(other) else { return false }
      }
      return true
    default:
      return false
    }
  }
}

extension JSONObject {
  /// The values of up to four keys, found in one pass over the members; nil for a key that is
  /// absent (or not asked: `fourth` nil). A repeated key gives its first value, as the
  /// subscript does.
  ///
  /// For reading a small object with known keys, a request's envelope or its params: one scan
  /// of the members for all the keys, where looking each key up scans them once per key.
  ///
  /// ```swift
  /// let (id, version, method, params) = request.values("id", "jsonrpc", "method", "params")
  /// ```
  public func values(_ first: String, _ second: String, _ third: String, _ fourth: String? = nil)
    -> (JSON?, JSON?, JSON?, JSON?)
  {
    guard count <= Self.linearLimit else {
      return (self[first], self[second], self[third], fourth.flatMap { self[$0] })
    }
    return withMembers { members in
      var found: (JSON?, JSON?, JSON?, JSON?) = (nil, nil, nil, nil)
      // Keys compared where they lie, not copied out first (a retain and a release each).
      for position in members.indices {
        if found.0 == nil && members[position].key == first {
          found.0 = members[position].value
        } else if found.1 == nil && members[position].key == second {
          found.1 = members[position].value
        } else if found.2 == nil && members[position].key == third {
          found.2 = members[position].value
        } else if found.3 == nil, let fourth, members[position].key == fourth {
          found.3 = members[position].value
        }
      }
      return found
    }
  }
}

extension JSONObject {
  /// Runs `body` on the value of `key` where it lies, without copying it out; `nil` when the
  /// object has no such member. For a look that only reads (a type tag compared with known
  /// names): the subscript's copy cost a retain and a release, and a string bound from it one
  /// more of each.
  ///
  /// ```swift
  /// let isIncrement = action.withValue(forKey: "type") { $0 == "increment" } ?? false
  /// ```
  public func withValue<Result>(
    forKey key: String, _ body: (borrowing JSON) throws -> Result
  ) rethrows -> Result? {
    guard let position = position(of: key) else { return nil }
    return try withMembers { members in try body(members[position].value) }
  }
}

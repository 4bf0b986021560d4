extension JSONObject {
  /// The text of the member `key` when it is a string; nil when there is no such member or it
  /// is of another kind. A repeated key gives its first value, as the subscript does.
  ///
  /// Read in place: `object[key]?.stringValue` copied the member out first, a retain and a
  /// release (atomic) of the string's box only to read its text. A request's envelope and its
  /// params are read this way (`jsonrpc`, `method`, `store`, `wait`).
  ///
  /// ```swift
  /// let request: JSONObject = ["jsonrpc": "2.0", "method": "dispatch"]
  /// request.string(forKey: "method")  // "dispatch"
  /// ```
  public func string(forKey key: String) -> String? {
    guard let position = position(of: key) else { return nil }
    return string(at: position)
  }

  /// Whether the member `key` is the string `expected`: compared where it lies, with no copy
  /// of the text for the answer (``string(forKey:)`` returns one: a retain and a release).
  ///
  /// ```swift
  /// let request: JSONObject = ["jsonrpc": "2.0"]
  /// request.hasString("2.0", forKey: "jsonrpc")  // true
  /// ```
  public func hasString(_ expected: String, forKey key: String) -> Bool {
    guard let position = position(of: key) else { return false }
    return withMembers { members in
      guard case .string(let string) = members[position].value else { return false }
      return string == expected
    }
  }

  /// The text of the member at `position` (`0..<count`) when it is a string, else nil; read
  /// in place like ``string(forKey:)``.
  public func string(at position: Int) -> String? {
    precondition(position >= 0 && position < count, "JSONObject position out of range")
    return withMembers { members in
      guard case .string(let string) = members[position].value else { return nil }
      return string
    }
  }
}

import JSON

extension JSON {
  /// Applies an RFC 7396 merge patch: members of an object patch replace or (when `null`)
  /// remove the target's members, recursively; any other patch replaces the target.
  ///
  /// ```swift
  /// JSON.mergePatch(["a": 1, "b": ["c": 2]], ["b": ["c": nil, "d": 3]])  // {"a":1,"b":{"d":3}}
  /// ```
  public static func mergePatch(_ target: JSON, _ patch: JSON) -> JSON {
    guard case .object(let patchMembers) = patch else { return patch }
    var result: JSONObject
    if case .object(let targetMembers) = target {
      result = targetMembers
    } else {
      result = JSONObject()
    }
    for (key, value) in patchMembers.members {
      if value.isNull {
        result.removeValue(forKey: key)
      } else {
        result.set(key, mergePatch(result[key] ?? .null, value))
      }
    }
    return .object(result)
  }
}

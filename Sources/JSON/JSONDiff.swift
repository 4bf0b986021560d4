// diff(old, new): the patch a frontend receives for every state change, so it must be correct
// for any pair, small, and cheap when little changed.
//
// - Subtrees that share storage are skipped without a walk (JSONDiffIdentity.swift).
// - Objects are compared member by member: removed keys, changed members (recursively), added
//   keys.
// - Arrays are trimmed of their common prefix and suffix first, then the middle is diffed by
//   `id` when every element is an object with a distinct `id`, otherwise by longest common
//   subsequence (JSONDiffArrays.swift).
// - Every object or array whose operations would weigh more (in serialized bytes) than one
//   `replace` of it gets that `replace` instead, so no patch outweighs replacing the document.

extension JSONPatch {
  /// A patch that turns `old` into `new`: applying it to `old` gives a document equal to `new`.
  ///
  /// ```swift
  /// let old: JSON = ["items": [["id": 1, "done": false], ["id": 2, "done": false]]]
  /// let new: JSON = ["items": [["id": 2, "done": true], ["id": 1, "done": false]]]
  /// JSONPatch.diff(from: old, to: new).json
  /// // [{"op":"move","path":"/items/1","from":"/items/0"},
  /// //  {"op":"replace","path":"/items/0/done","value":true}]
  /// ```
  ///
  /// Unchanged subtrees produce no operations, a changed scalar one `replace`, an added or
  /// removed member one `add` or `remove`. Arrays whose elements are objects with distinct `id`
  /// members are matched by `id`, so inserting, removing or moving one element costs one
  /// operation whatever the array's length. The patch is never larger than a `replace` of the
  /// whole document.
  public static func diff(from old: JSON, to new: JSON) -> JSONPatch {
    var differ = Differ()
    differ.diff(old, new)
    return JSONPatch(differ.operations)
  }
}

/// Accumulates the operations of one diff, with the path being visited kept as a stack of
/// tokens (a `JSONPointer` is only built for an operation that is emitted).
struct Differ {
  private(set) var operations: [JSONPatch.Operation] = []
  /// Serialized bytes of `operations`, each counted with its separating comma.
  private(set) var size = 0
  var path: [String] = []

  var pointer: JSONPointer { JSONPointer(tokens: path) }

  mutating func emit(_ operation: JSONPatch.Operation) {
    operations.append(operation)
    size += operation.serializedSize + 1
  }

  /// Diffs `old` against `new` at the current path.
  mutating func diff(_ old: JSON, _ new: JSON) {
    switch (old, new) {
    case (.object(let a), .object(let b)):
      if JSON.sharesStorage(a, b) { return }
      bounded(by: new) { differ in differ.diffObjects(a, b) }
    case (.array(let a), .array(let b)):
      if JSON.sharesStorage(a, b) { return }
      bounded(by: new) { differ in differ.diffArrays(a, b) }
    default:
      if old != new { emitReplace(with: new) }
    }
  }

  /// Diffs `old` against `new` at `path + [token]`.
  mutating func diff(_ old: JSON, _ new: JSON, at token: String) {
    path.append(token)
    diff(old, new)
    path.removeLast()
  }

  /// Runs `body`, then swaps what it emitted for one `replace` of the current path with `new`
  /// when that is smaller.
  private mutating func bounded(by new: JSON, _ body: (inout Differ) -> Void) {
    let start = operations.count
    let startSize = size
    body(&self)
    let spent = size - startSize
    guard spent > 0 else { return }
    let replaceOverhead =
      JSONPatch.Operation.replace(path: pointer, value: .null).serializedSize
      - 4 + 1
    // Stop measuring `new` as soon as it is known not to beat what was spent.
    let replaceSize = replaceOverhead + new.serializedSize(limit: spent - replaceOverhead)
    guard replaceSize < spent else { return }
    operations.removeSubrange(start...)
    size = startSize
    emitReplace(with: new)
  }

  /// Replaces the value at the current path with `new`. For an object member named `-` this
  /// is an `add` (which RFC 6902 defines to replace an existing member): Python's `jsonpatch`
  /// (1.33) refuses any `replace` whose last token is `-`, even on an object, and clients must
  /// be able to apply every patch with it.
  private mutating func emitReplace(with new: JSON) {
    if path.last == "-" {
      emit(.add(path: pointer, value: new))
    } else {
      emit(.replace(path: pointer, value: new))
    }
  }

  private mutating func diffObjects(_ a: JSONObject, _ b: JSONObject) {
    if a.hasSameKeys(as: b) {
      // Same keys in the same order (a new state derived from the old): pair by position.
      for position in 0..<a.count {
        let (key, oldValue) = a.member(at: position)
        diff(oldValue, b.value(at: position), at: key)
      }
      return
    }
    for (key, oldValue) in a.members {
      if let newValue = b[key] {
        diff(oldValue, newValue, at: key)
      } else {
        emit(.remove(path: pointer.appending(key)))
      }
    }
    for (key, newValue) in b.members where a.position(of: key) == nil {
      emit(.add(path: pointer.appending(key), value: newValue))
    }
  }
}

import JSON

/// `state/blame`: which held entries changed the value now at a pointer, newest first.
///
/// The rule. Entries are walked from the newest back, each one's patch operations in reverse,
/// following the value now at `path` back through time:
/// - An operation whose path is the pointer, one of its ancestors or one of its descendants
///   touched the value (a `replace` of an ancestor rewrote it, an edit inside it changed it).
/// - An `add` or `remove` in an array before the value's index shifted it without touching it:
///   the pointer followed back has the index it had then (one less before an `add`, one more
///   before a `remove`, at the same or a lower index). Two numeric tokens are taken for an
///   array and its index.
/// - A `move` onto the value brought it from `from`: the walk goes on from there.
/// - An `add` of the value (or of an ancestor) created it: that entry is the oldest touch, and
///   the walk stops.
///
/// ```swift
/// let touches = HistoryBlame.touches(of: "/items/0/title", in: store.historyEntries(...))
/// touches.first?.entry.version   // the last writer
/// ```
public enum HistoryBlame {
  /// One entry that touched the value, with the pointer the value had when it did.
  public struct Touch: Sendable {
    public var entry: HistoryEntry
    public var path: JSONPointer
    /// The entry added the value: nothing older touched it.
    public var created: Bool
  }

  /// The entries among `entries` (oldest first, as `historyEntries` gives them) that touched
  /// the value now at `pointer`, newest first.
  public static func touches(of pointer: JSONPointer, in entries: [HistoryEntry]) -> [Touch] {
    var path = pointer.tokens
    var touches: [Touch] = []
    for entry in entries.reversed() {
      let then = JSONPointer(tokens: path)
      var touched = false
      var created = false
      for operation in entry.patch.reversed() {
        let effect = undo(operation, following: &path)
        touched = touched || effect != .none
        if effect == .created {
          created = true
          break
        }
      }
      // The path recorded is the one the value had after the entry: where its patch wrote.
      if touched { touches.append(Touch(entry: entry, path: then, created: created)) }
      if created { break }
    }
    return touches
  }

  private enum Effect { case none, touched, created }

  /// What `operation` did to the value at `path` (the path after it), and the path before it.
  private static func undo(_ operation: JSON, following path: inout [String]) -> Effect {
    guard let op = operation["op"]?.stringValue, let text = operation["path"]?.stringValue,
      let target = try? JSONPointer(parsing: text)
    else { return .none }
    switch op {
    case "add", "copy":
      return undoAdd(at: target.tokens, following: &path)
    case "remove":
      return undoRemove(at: target.tokens, following: &path)
    case "replace":
      return overlaps(target.tokens, path) ? .touched : .none
    case "move":
      guard let fromText = operation["from"]?.stringValue,
        let from = try? JSONPointer(parsing: fromText)
      else { return .none }
      if isPrefix(target.tokens, of: path) {
        path = from.tokens + path[target.tokens.count...]
        return .touched
      }
      let added = undoAdd(at: target.tokens, following: &path)
      let removed = undoRemove(at: from.tokens, following: &path)
      return added == .none && removed == .none ? .none : .touched
    default:
      return .none
    }
  }

  private static func undoAdd(at target: [String], following path: inout [String]) -> Effect {
    if let shift = arrayShift(target, path) {
      if shift.index < shift.position {
        path[target.count - 1] = String(shift.position - 1)
        return .none
      }
      return shift.index == shift.position ? .created : .none
    }
    if isPrefix(target, of: path) { return .created }
    return isPrefix(path, of: target) ? .touched : .none
  }

  private static func undoRemove(at target: [String], following path: inout [String]) -> Effect {
    if let shift = arrayShift(target, path) {
      if shift.index <= shift.position { path[target.count - 1] = String(shift.position + 1) }
      return .none
    }
    return overlaps(target, path) ? .touched : .none
  }

  /// When `target` is an element of an array on `path`'s way (same parent, both indices
  /// numeric): the operation's index and the path's.
  private static func arrayShift(_ target: [String], _ path: [String]) -> (
    index: Int, position: Int
  )? {
    let depth = target.count - 1
    guard depth >= 0, depth < path.count, Array(path[..<depth]) == Array(target[..<depth]),
      let index = Int(target[depth]), let position = Int(path[depth]), index >= 0, position >= 0
    else { return nil }
    return (index, position)
  }

  private static func overlaps(_ a: [String], _ b: [String]) -> Bool {
    isPrefix(a, of: b) || isPrefix(b, of: a)
  }

  private static func isPrefix(_ a: [String], of b: [String]) -> Bool {
    a.count <= b.count && Array(b[..<a.count]) == a
  }
}

// Undoing a patch that failed part way: each edit `JSONPatch.apply(to:)` makes records how to
// reverse itself, and a failure replays the log backwards (JSONPatchApply.swift says why a log
// rather than a copy of the document).

/// How to take back the edits of one or more patches applied with
/// `JSONPatch.apply(to:recording:)`: a history keeps one per entry and walks a view back to an
/// earlier version (`JSON.reverse(_:)`) instead of keeping copies of past views, which would
/// make the next in-place edit of the live one copy what it edits.
public struct JSONPatchReversal: Sendable {
  var entries: [Undo] = []
  /// False once an edit was recorded without the value it replaced (`markIncomplete()`).
  public internal(set) var isComplete = true

  /// Nothing to take back.
  public init() {}

  /// Whether there is nothing to take back.
  public var isEmpty: Bool { entries.isEmpty && isComplete }
}

extension JSON {
  /// Takes back the edits `reversal` recorded, newest first. `self` must be the document
  /// exactly as those patches left it (later edits taken back first); when it is not, an edit
  /// may not find its place: the error says which, and `self` is left part way.
  public mutating func reverse(_ reversal: JSONPatchReversal) throws(JSONPatchError) {
    guard reversal.isComplete else {
      throw JSONPatchError(
        kind: .pathNotFound, operationIndex: nil, field: "path",
        reason: "the values these edits replaced were not kept")
    }
    for entry in reversal.entries.reversed() { try rollBack(entry) }
  }
}

/// The undo entries of a patch being applied; `isRecording` off drops them.
struct UndoLog {
  var entries: [Undo] = []
  var isRecording = true

  mutating func append(_ entry: @autoclosure () -> Undo) {
    if isRecording { entries.append(entry()) }
  }
}

/// How to reverse one primitive edit. Removed and replaced values are kept by reference, so
/// recording costs no copy. `path` is the edited value's; its parent (all but the last token)
/// is the container edited.
enum Undo {
  case root(JSON)
  /// Restore the member of the object at the parent of `path` named by its last token: remove
  /// it when `old` is nil, otherwise put `old` back at `position`.
  case objectMember(path: JSONPointer, old: JSON?, position: Int)
  case arrayRemove(path: JSONPointer, index: Int)
  case arrayInsert(path: JSONPointer, index: Int, value: JSON)
  case arraySet(path: JSONPointer, index: Int, value: JSON)
}

extension JSON {
  /// Replays `undo` backwards. Each entry reverses an edit that succeeded on exactly the state
  /// the later entries leave behind, so every path in it exists again when it is replayed.
  mutating func rollBack(_ undo: [Undo]) {
    for entry in undo.reversed() {
      do {
        try rollBack(entry)
      } catch {
        preconditionFailure("JSONPatch rollback could not reverse its own edit: \(error)")
      }
    }
  }

  private mutating func rollBack(_ entry: Undo) throws(JSONPatchError) {
    switch entry {
    case .root(let old):
      self = old
    case .objectMember(let path, let old, let position):
      let key = path.tokens[path.tokens.count - 1]
      try modify(path, depth: path.tokens.count - 1, field: "path") {
        container in
        guard var object = container.takeObject() else { return }
        defer { container = .object(object) }
        if let old {
          if object.position(of: key) != nil {
            object.set(key, old)
          } else {
            var members = Array(object.members.lazy.map { ($0.key, $0.value) })
            members.insert((key, old), at: min(position, members.count))
            object = JSONObject(members)
          }
        } else {
          object.removeValue(forKey: key)
        }
      }
    case .arrayRemove(let path, let index):
      try editArray(at: path) { $0.remove(at: index) }
    case .arrayInsert(let path, let index, let value):
      try editArray(at: path) { $0.insert(value, at: index) }
    case .arraySet(let path, let index, let value):
      try editArray(at: path) { $0[index] = value }
    }
  }

  /// Edits the array at the parent of `path`.
  private mutating func editArray(
    at path: JSONPointer, _ edit: (inout [JSON]) -> Void
  ) throws(JSONPatchError) {
    try modify(path, depth: path.tokens.count - 1, field: "path") {
      container in
      guard var elements = container.takeArray() else { return }
      edit(&elements)
      container = .array(elements)
    }
  }
}

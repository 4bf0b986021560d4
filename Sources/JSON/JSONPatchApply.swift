// Applying a patch: in place, atomically.
//
// Two properties shape this file. Speed: the StateKit store keeps its last published document
// and applies every patch to it, so a `replace` inside a 100,000-element array must edit that
// array where it lies, never copy it. Every container on the way down is therefore taken out of
// its parent (leaving `.null` behind) so that it is uniquely referenced while it is edited, and
// put back afterwards. Atomicity: keeping a copy of the document to restore on failure would
// make the document shared and force exactly those copies, so each operation instead records
// how to undo itself, and a failure replays the undo log backwards.

extension JSONPatch {
  /// Applies the operations in order to `document`, editing it in place.
  ///
  /// Atomic: if an operation fails, `document` is left exactly as it was (key order included)
  /// and the error names the operation's index and the reason.
  ///
  /// ```swift
  /// var document: JSON = ["items": [1, 2]]
  /// try JSONPatch([.add(path: "/items/-", value: 3)]).apply(to: &document)
  /// // ["items": [1, 2, 3]]
  /// ```
  public func apply(to document: inout JSON) throws(JSONPatchError) {
    var undo = UndoLog()
    for (index, operation) in operations.enumerated() {
      // Nothing after the last operation can fail, so its edit needs no undo entry unless it
      // makes two (`move`: a remove, then an add that may fail). A one-operation patch (every
      // counter increment) then allocates no log.
      if index == operations.count - 1, !operation.editsTwice { undo.isRecording = false }
      do {
        try document.perform(operation, undo: &undo)
      } catch {
        document.rollBack(undo.entries)
        var located = error
        located.operationIndex = index
        throw located
      }
    }
  }

  /// The result of applying the patch to a copy of `document`; `document` is not changed.
  public func applied(to document: JSON) throws(JSONPatchError) -> JSON {
    var copy = document
    try apply(to: &copy)
    return copy
  }
}

extension JSONPatch.Operation {
  /// Whether applying it makes two edits, the second of which can fail after the first.
  fileprivate var editsTwice: Bool {
    if case .move = self { return true }
    return false
  }
}

/// The undo entries of a patch being applied; `isRecording` off drops them.
private struct UndoLog {
  var entries: [Undo] = []
  var isRecording = true

  mutating func append(_ entry: @autoclosure () -> Undo) {
    if isRecording { entries.append(entry()) }
  }
}

/// How to reverse one primitive edit. Removed and replaced values are kept by reference, so
/// recording costs no copy.
private enum Undo {
  case root(JSON)
  /// Restore member `key` of the object at `parent`: remove it when `old` is nil, otherwise
  /// put `old` back at `position`.
  case objectMember(parent: ArraySlice<String>, key: String, old: JSON?, position: Int)
  case arrayRemove(parent: ArraySlice<String>, index: Int)
  case arrayInsert(parent: ArraySlice<String>, index: Int, value: JSON)
  case arraySet(parent: ArraySlice<String>, index: Int, value: JSON)
}

extension JSON {
  fileprivate mutating func perform(
    _ operation: JSONPatch.Operation, undo: inout UndoLog
  ) throws(JSONPatchError) {
    switch operation {
    case .add(let path, let value):
      try add(value, at: path, field: "path", undo: &undo)
    case .remove(let path):
      _ = try remove(at: path, field: "path", undo: &undo)
    case .replace(let path, let value):
      try replace(at: path, with: value, undo: &undo)
    case .move(let from, let path):
      if from.isProperPrefix(of: path) {
        throw JSONPatchError(
          kind: .moveIntoChild, operationIndex: nil, field: "path",
          reason: "cannot move \"\(from)\" into its own child \"\(path)\"")
      }
      if from == path {
        _ = try resolve(from, field: "from")  // a no-op, but `from` must still exist
        return
      }
      let value = try remove(at: from, field: "from", undo: &undo)
      try add(value, at: path, field: "path", undo: &undo)
    case .copy(let from, let path):
      let value = try resolve(from, field: "from")
      try add(value, at: path, field: "path", undo: &undo)
    case .test(let path, let value):
      let actual = try resolve(path, field: "path")
      guard actual.equalsByValue(value) else {
        throw JSONPatchError(
          kind: .testFailed, operationIndex: nil, field: "value",
          reason: "test failed: \"\(path)\" is \(actual.abbreviated), not \(value.abbreviated)")
      }
    }
  }

  /// The value at `pointer`, or an error saying which token failed and why.
  fileprivate func resolve(_ pointer: JSONPointer, field: String) throws(JSONPatchError) -> JSON {
    var current = self
    for (depth, token) in pointer.tokens.enumerated() {
      switch current {
      case .object(let object):
        guard let member = object[token] else {
          throw JSON.notFound(
            pointer, depth: depth, field: field, why: "has no member \"\(token)\"")
        }
        current = member
      case .array(let elements):
        guard let index = JSONPointer.arrayIndex(token), index < elements.count else {
          throw JSON.badIndex(
            pointer, token: token, count: elements.count, field: field, allowEnd: false)
        }
        current = elements[index]
      default:
        throw JSON.notFound(
          pointer, depth: depth, field: field,
          why: "is \(current.kindDescription), which has no members")
      }
    }
    return current
  }

  private mutating func add(
    _ value: JSON, at path: JSONPointer, field: String, undo: inout UndoLog
  ) throws(JSONPatchError) {
    guard let key = path.tokens.last else {
      undo.append(.root(self))
      self = value
      return
    }
    let parent = path.tokens.dropLast()
    try modify(at: parent, pointer: path, field: field) { container throws(JSONPatchError) in
      if var object = container.takeObject() {
        defer { container = .object(object) }
        let position = object.position(of: key)
        let old = position.map { object.value(at: $0) }
        undo.append(
          .objectMember(parent: parent, key: key, old: old, position: position ?? object.count))
        object.set(key, value)
      } else if var elements = container.takeArray() {
        defer { container = .array(elements) }
        let index: Int
        if key == "-" {
          index = elements.count
        } else if let parsed = JSONPointer.arrayIndex(key), parsed <= elements.count {
          index = parsed
        } else {
          throw JSON.badIndex(
            path, token: key, count: elements.count, field: field, allowEnd: true)
        }
        elements.insert(value, at: index)
        undo.append(.arrayRemove(parent: parent, index: index))
      } else {
        throw JSON.notFound(
          path, depth: parent.count, field: field,
          why: "is \(container.kindDescription), not an object or array")
      }
    }
  }

  private mutating func remove(
    at path: JSONPointer, field: String, undo: inout UndoLog
  ) throws(JSONPatchError) -> JSON {
    guard let key = path.tokens.last else {
      throw JSONPatchError(
        kind: .pathNotFound, operationIndex: nil, field: field,
        reason: "cannot remove the whole document (\"\"); replace it instead")
    }
    let parent = path.tokens.dropLast()
    return try modify(at: parent, pointer: path, field: field) {
      container throws(JSONPatchError) -> JSON in
      if var object = container.takeObject() {
        defer { container = .object(object) }
        guard let position = object.position(of: key) else {
          throw JSON.notFound(
            path, depth: parent.count, field: field, why: "has no member \"\(key)\"")
        }
        let removed = object.value(at: position)
        object.removeValue(forKey: key)
        undo.append(.objectMember(parent: parent, key: key, old: removed, position: position))
        return removed
      } else if var elements = container.takeArray() {
        defer { container = .array(elements) }
        guard let index = JSONPointer.arrayIndex(key), index < elements.count else {
          throw JSON.badIndex(
            path, token: key, count: elements.count, field: field, allowEnd: false)
        }
        let removed = elements.remove(at: index)
        undo.append(.arrayInsert(parent: parent, index: index, value: removed))
        return removed
      } else {
        throw JSON.notFound(
          path, depth: parent.count, field: field,
          why: "is \(container.kindDescription), not an object or array")
      }
    }
  }

  private mutating func replace(
    at path: JSONPointer, with value: JSON, undo: inout UndoLog
  ) throws(JSONPatchError) {
    guard let key = path.tokens.last else {
      undo.append(.root(self))
      self = value
      return
    }
    let parent = path.tokens.dropLast()
    try modify(at: parent, pointer: path, field: "path") { container throws(JSONPatchError) in
      if var object = container.takeObject() {
        defer { container = .object(object) }
        guard let position = object.position(of: key) else {
          throw JSON.notFound(
            path, depth: parent.count, field: "path",
            why: "has no member \"\(key)\" to replace (add creates members)")
        }
        let old = object.value(at: position)
        object.setValue(value, at: position)
        undo.append(.objectMember(parent: parent, key: key, old: old, position: position))
      } else if var elements = container.takeArray() {
        defer { container = .array(elements) }
        guard let index = JSONPointer.arrayIndex(key), index < elements.count else {
          throw JSON.badIndex(
            path, token: key, count: elements.count, field: "path", allowEnd: false)
        }
        let old = elements[index]
        elements[index] = value
        undo.append(.arraySet(parent: parent, index: index, value: old))
      } else {
        throw JSON.notFound(
          path, depth: parent.count, field: "path",
          why: "is \(container.kindDescription), not an object or array")
      }
    }
  }

  /// Runs `body` on the value at `tokens`, edited where it lies.
  ///
  /// An object member is taken out of its object (the slot holds `.null` meanwhile) and put
  /// back afterwards, because `JSONObject` has no in-place accessor for a member; an array
  /// element is edited through `Array`'s own in-place subscript. `pointer` is the operation's
  /// full path, for error messages.
  private mutating func modify<Result>(
    at tokens: ArraySlice<String>, pointer: JSONPointer, field: String,
    _ body: (inout JSON) throws(JSONPatchError) -> Result
  ) throws(JSONPatchError) -> Result {
    guard let token = tokens.first else { return try body(&self) }
    let depth = pointer.tokens.count - tokens.count
    if var object = takeObject() {
      defer { self = .object(object) }
      guard let position = object.position(of: token) else {
        throw JSON.notFound(pointer, depth: depth, field: field, why: "has no member \"\(token)\"")
      }
      var member = object.value(at: position)
      object.setValue(.null, at: position)  // now `member` is the only reference to its value
      defer { object.setValue(member, at: position) }
      return try member.modify(at: tokens.dropFirst(), pointer: pointer, field: field, body)
    }
    if var elements = takeArray() {
      defer { self = .array(elements) }
      guard let index = JSONPointer.arrayIndex(token), index < elements.count else {
        throw JSON.badIndex(
          pointer, token: token, count: elements.count, field: field, allowEnd: false)
      }
      return try elements[index].modify(
        at: tokens.dropFirst(), pointer: pointer, field: field, body)
    }
    throw JSON.notFound(
      pointer, depth: depth, field: field, why: "is \(kindDescription), which has no members")
  }

  /// The array this value holds, moved out: `self` becomes `.null`, so the caller holds the
  /// only reference and edits it without a copy. `nil` (and `self` untouched) for non-arrays.
  ///
  /// A separate function on purpose: binding the payload in a `switch self` keeps a second
  /// reference alive for the whole `switch` in unoptimized builds, which forces a copy.
  mutating func takeArray() -> [JSON]? {
    guard case .array(let elements) = self else { return nil }
    self = .null
    return elements
  }

  /// The object this value holds, moved out like ``takeArray()``.
  mutating func takeObject() -> JSONObject? {
    guard case .object(let object) = self else { return nil }
    self = .null
    return object
  }

  /// Replays `undo` backwards. Each entry reverses an edit that succeeded on exactly the state
  /// the later entries leave behind, so every path in it exists again when it is replayed.
  fileprivate mutating func rollBack(_ undo: [Undo]) {
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
    case .objectMember(let parent, let key, let old, let position):
      try modify(at: parent, pointer: JSONPointer(tokens: Array(parent)), field: "path") {
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
    case .arrayRemove(let parent, let index):
      try editArray(at: parent) { $0.remove(at: index) }
    case .arrayInsert(let parent, let index, let value):
      try editArray(at: parent) { $0.insert(value, at: index) }
    case .arraySet(let parent, let index, let value):
      try editArray(at: parent) { $0[index] = value }
    }
  }

  private mutating func editArray(
    at parent: ArraySlice<String>, _ edit: (inout [JSON]) -> Void
  ) throws(JSONPatchError) {
    try modify(at: parent, pointer: JSONPointer(tokens: Array(parent)), field: "path") {
      container in
      guard var elements = container.takeArray() else { return }
      edit(&elements)
      container = .array(elements)
    }
  }

  /// The compact text, cut short for an error message.
  fileprivate var abbreviated: String {
    let text = description
    return text.count <= 80 ? text : text.prefix(77) + "..."
  }

  static func notFound(
    _ pointer: JSONPointer, depth: Int, field: String, why: String
  ) -> JSONPatchError {
    let reached = JSONPointer(tokens: Array(pointer.tokens.prefix(depth)))
    let place = reached.isRoot ? "the document" : "\"\(reached)\""
    return JSONPatchError(
      kind: .pathNotFound, operationIndex: nil, field: field,
      reason: "\"\(pointer)\" does not exist: \(place) \(why)")
  }

  static func badIndex(
    _ pointer: JSONPointer, token: String, count: Int, field: String, allowEnd: Bool
  ) -> JSONPatchError {
    JSONPatchError(
      kind: .invalidIndex, operationIndex: nil, field: field,
      reason: "\"\(pointer)\": "
        + JSONPointer.indexProblem(token, count: count, allowEnd: allowEnd))
  }
}

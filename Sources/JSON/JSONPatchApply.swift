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
    if let failure = perform(on: &document, undo: &undo, keepingUndo: false) { throw failure }
  }

  /// `apply(to:)` that also appends to `reversal` how to take this patch's edits back
  /// (`JSON.reverse(_:)`): the values it replaced or removed, kept by reference, not copied.
  /// A failed patch leaves `document` and `reversal` as they were.
  public func apply(
    to document: inout JSON, recording reversal: inout JSONPatchReversal
  ) throws(JSONPatchError) {
    var undo = UndoLog()
    if let failure = perform(on: &document, undo: &undo, keepingUndo: true) { throw failure }
    if reversal.entries.isEmpty {
      swap(&reversal.entries, &undo.entries)
    } else {
      reversal.entries += undo.entries
    }
  }

  /// `apply(to:)` that appends to `retired` the values it replaced or removed, moved out of
  /// `document` rather than let go. A caller applying many patches to one large document
  /// (a journal replayed onto its snapshot) lets them go together afterwards: freed one by
  /// one, each would leave a hole inside the document's memory that the next patch's values
  /// fill, and those scattered survivors keep the document's memory from coming free in long
  /// runs when it is later let go. A failed patch leaves `document` and `retired` as they were.
  package func apply(to document: inout JSON, retiring retired: inout [JSON]) throws(JSONPatchError)
  {
    var undo = UndoLog()
    if let failure = perform(on: &document, undo: &undo, keepingUndo: true) { throw failure }
    for entry in undo.entries {
      switch entry {
      case .root(let value), .arrayInsert(_, _, let value), .arraySet(_, _, let value),
        .objectMember(_, let value?, _):
        retired.append(value)
      case .objectMember(_, nil, _), .arrayRemove:
        break
      }
    }
  }

  /// Applies the operations in order, recording each edit's undo in `undo`; on a failure rolls
  /// them back and returns the error located at its operation. `keepingUndo` false leaves the
  /// last edit unrecorded when nothing after it can fail.
  private func perform(
    on document: inout JSON, undo: inout UndoLog, keepingUndo: Bool
  ) -> JSONPatchError? {
    // Through the buffer, each operation read where it lies: `enumerated()`, and the array's
    // subscript too, copied each one out (a retain and a release of its path and its value).
    operations.withUnsafeBufferPointer { operations in
      for index in operations.indices {
        // Nothing after the last operation can fail, so its edit needs no undo entry unless it
        // makes two (`move`: a remove, then an add that may fail). A one-operation patch (every
        // counter increment) then allocates no log.
        if !keepingUndo, index == operations.count - 1, !operations[index].editsTwice {
          undo.isRecording = false
        }
        do throws(JSONPatchError) {
          try document.perform(operations[index], undo: &undo)
        } catch {
          document.rollBack(undo.entries)
          var located = error
          located.operationIndex = index
          return located
        }
      }
      return nil
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

extension JSON {
  /// `operation` is borrowed where it lies in the patch (passed plainly, it was copied out of
  /// the array first: a retain and a release of its path and value).
  fileprivate mutating func perform(
    _ operation: borrowing JSONPatch.Operation, undo: inout UndoLog
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
    let depth = path.tokens.count - 1
    guard depth >= 0 else {
      undo.append(.root(self))
      self = value
      return
    }
    try modify(path, depth: depth, field: field) { container throws(JSONPatchError) in
      let key = path.tokens[depth]
      if var object = container.takeObject() {
        defer { container = .object(object) }
        if let position = object.position(of: key) {
          let old = object.exchangeValue(value, at: position)
          undo.append(.objectMember(path: path, old: old, position: position))
        } else {
          undo.append(.objectMember(path: path, old: nil, position: object.count))
          object.appendNew(key, value)
        }
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
        undo.append(.arrayRemove(path: path, index: index))
      } else {
        throw JSON.notFound(
          path, depth: depth, field: field,
          why: "is \(container.kindDescription), not an object or array")
      }
    }
  }

  private mutating func remove(
    at path: JSONPointer, field: String, undo: inout UndoLog
  ) throws(JSONPatchError) -> JSON {
    let depth = path.tokens.count - 1
    guard depth >= 0 else {
      throw JSONPatchError(
        kind: .pathNotFound, operationIndex: nil, field: field,
        reason: "cannot remove the whole document (\"\"); replace it instead")
    }
    return try modify(path, depth: depth, field: field) {
      container throws(JSONPatchError) -> JSON in
      let key = path.tokens[depth]
      if var object = container.takeObject() {
        defer { container = .object(object) }
        guard let position = object.position(of: key) else {
          throw JSON.notFound(
            path, depth: depth, field: field, why: "has no member \"\(key)\"")
        }
        let removed = object.value(at: position)
        object.removeValue(forKey: key)
        undo.append(.objectMember(path: path, old: removed, position: position))
        return removed
      } else if var elements = container.takeArray() {
        defer { container = .array(elements) }
        guard let index = JSONPointer.arrayIndex(key), index < elements.count else {
          throw JSON.badIndex(
            path, token: key, count: elements.count, field: field, allowEnd: false)
        }
        let removed = elements.remove(at: index)
        undo.append(.arrayInsert(path: path, index: index, value: removed))
        return removed
      } else {
        throw JSON.notFound(
          path, depth: depth, field: field,
          why: "is \(container.kindDescription), not an object or array")
      }
    }
  }

  private mutating func replace(
    at path: JSONPointer, with value: JSON, undo: inout UndoLog
  ) throws(JSONPatchError) {
    let depth = path.tokens.count - 1
    guard depth >= 0 else {
      undo.append(.root(self))
      self = value
      return
    }
    // A member of the document itself (`/count`) is replaced without the closure, whose
    // captures were copied (a retain each for the path, its key and the value).
    if depth == 0 { return try replaceMember(path, depth: 0, with: value, undo: &undo) }
    try modify(path, depth: depth, field: "path") { container throws(JSONPatchError) in
      try container.replaceMember(path, depth: depth, with: value, undo: &undo)
    }
  }

  /// `replace`'s edit of this container, the parent of `path` (`depth` tokens deep).
  private mutating func replaceMember(
    _ path: JSONPointer, depth: Int, with value: JSON, undo: inout UndoLog
  ) throws(JSONPatchError) {
    if var object = takeObject() {
      defer { self = .object(object) }
      guard let position = object.position(of: path.tokens[depth]) else {
        throw JSON.notFound(
          path, depth: depth, field: "path",
          why: "has no member \"\(path.tokens[depth])\" to replace (add creates members)")
      }
      // The old value moved out, not copied: dropped at once unless the undo log keeps it.
      let old = object.exchangeValue(value, at: position)
      undo.append(.objectMember(path: path, old: old, position: position))
    } else if var elements = takeArray() {
      defer { self = .array(elements) }
      let key = path.tokens[depth]
      guard let index = JSONPointer.arrayIndex(key), index < elements.count else {
        throw JSON.badIndex(
          path, token: key, count: elements.count, field: "path", allowEnd: false)
      }
      let old = elements[index]
      elements[index] = value
      undo.append(.arraySet(path: path, index: index, value: old))
    } else {
      throw JSON.notFound(
        path, depth: depth, field: "path",
        why: "is \(kindDescription), not an object or array")
    }
  }

  /// Runs `body` on the value at the first `depth` tokens of `pointer` (its parent, for an
  /// edit of the member or element the last token names), edited where it lies; `level` is
  /// how many tokens are behind already.
  ///
  /// An object member is taken out of its object (the slot holds `.null` meanwhile) and put
  /// back afterwards, because `JSONObject` has no in-place accessor for a member; an array
  /// element is edited through `Array`'s own in-place subscript. `pointer` is the operation's
  /// full path, for error messages, and its tokens are read where they lie (a slice of them
  /// per level cost a retain and a release each).
  mutating func modify<Result>(
    _ pointer: JSONPointer, depth: Int, level: Int = 0, field: String,
    _ body: (inout JSON) throws(JSONPatchError) -> Result
  ) throws(JSONPatchError) -> Result {
    guard level < depth else { return try body(&self) }
    if var object = takeObject() {
      defer { self = .object(object) }
      guard let position = object.position(of: pointer.tokens[level]) else {
        throw JSON.notFound(
          pointer, depth: level, field: field,
          why: "has no member \"\(pointer.tokens[level])\"")
      }
      var member = object.exchangeValue(.null, at: position)  // `member` is the only reference
      defer { _ = object.exchangeValue(member, at: position) }
      return try member.modify(pointer, depth: depth, level: level + 1, field: field, body)
    }
    if var elements = takeArray() {
      defer { self = .array(elements) }
      let token = pointer.tokens[level]
      guard let index = JSONPointer.arrayIndex(token), index < elements.count else {
        throw JSON.badIndex(
          pointer, token: token, count: elements.count, field: field, allowEnd: false)
      }
      return try elements[index].modify(
        pointer, depth: depth, level: level + 1, field: field, body)
    }
    throw JSON.notFound(
      pointer, depth: level, field: field, why: "is \(kindDescription), which has no members")
  }

  /// The array this value holds, moved out: `self` becomes `.null`, so the caller holds the
  /// only reference and edits it without a copy. `nil` (and `self` untouched) for non-arrays.
  ///
  /// A separate function on purpose: binding the payload in a `switch self` keeps a second
  /// reference alive for the whole `switch` in unoptimized builds, which forces a copy.
  ///
  /// `self` is consumed and set again rather than read and overwritten: reading the payload
  /// copied it (a retain) and overwriting released the old value (a release).
  mutating func takeArray() -> [JSON]? {
    switch consume self {
    case .array(let elements):
      self = .null
      return elements
    case let other:
      self = other
      return nil
    }
  }

  /// Whether this value's object is held by it alone, so that a patch edits the object in
  /// place rather than copying it first (and, through it, the path to what it edits); true for
  /// a value that is not an object.
  package mutating func isObjectHeldAlone() -> Bool {
    guard var object = takeObject() else { return true }
    defer { self = .object(object) }
    return object.isUniquelyHeld()
  }

  /// The object this value holds, moved out like ``takeArray()``.
  mutating func takeObject() -> JSONObject? {
    switch consume self {
    case .object(let object):
      self = .null
      return object
    case let other:
      self = other
      return nil
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

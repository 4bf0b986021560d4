// A patch as a subscriber to one subtree sees it (docs/protocol.md, `state/patch`): paths stay
// root-relative, operations outside the subtree are left out, and anything that changes the
// subtree as a whole arrives as one operation on the subscribed path.

extension JSONPatch {
  /// The part of this patch that a subscription to `path` receives, or `nil` when the patch
  /// does not change that subtree. `newDocument` is the document after the whole patch.
  ///
  /// - Operations entirely outside the subtree are dropped, and so are `test` operations that
  ///   do not lie inside it (they change nothing).
  /// - Operations inside it are kept as they are, with their full root-relative paths.
  /// - If any operation replaces the subtree as a whole, the result is one operation on `path`
  ///   carrying its final value from `newDocument` (or a `remove` if it no longer exists):
  ///   an operation on `path` or an ancestor, a `move` away from an ancestor, a `move` or
  ///   `copy` from outside into the subtree (the subscriber does not have that value), and an
  ///   insertion or removal in an array on the way to `path` at or before `path`'s index
  ///   (after which `path` designates another element).
  /// - That operation follows `existedBefore`, whether `path` existed before the patch: `add`
  ///   when it did not, `replace` when it did and still does, `remove` when it did and no
  ///   longer does, and nothing at all when it exists neither before nor after. Without it
  ///   (`nil`, the caller does not know) the operation is `add` when `path`'s parent is an
  ///   object (valid whether or not the member existed) and `replace` for an array element.
  /// - A `move` from inside the subtree to outside becomes a `remove` of its `from`.
  ///
  /// ```swift
  /// let patch = JSONPatch([.replace(path: "/a/x", value: 1), .add(path: "/b", value: 2)])
  /// patch.scoped(to: "/a", in: newDocument)  // [replace /a/x 1]
  /// ```
  public func scoped(
    to path: JSONPointer, in newDocument: JSON, existedBefore: Bool? = nil
  ) -> JSONPatch? {
    scoped(
      to: path, existedBefore: existedBefore, value: { path.value(in: newDocument) },
      parentIsObject: {
        guard let parent = path.parent, case .object = parent.value(in: newDocument) else {
          return false
        }
        return true
      })
  }

  /// `scoped(to:in:existedBefore:)` for a document that is not at hand whole: `value` gives
  /// the new document's value at `path`, and `parentIsObject` whether `path`'s parent is an
  /// object there (asked only when `existedBefore` is nil), both only when the subtree changed
  /// as a whole.
  public func scoped(
    to path: JSONPointer, existedBefore: Bool? = nil, value: () -> JSON?,
    parentIsObject: () -> Bool
  ) -> JSONPatch? {
    if path.isRoot { return isEmpty ? nil : self }
    var kept: [Operation] = []
    for operation in operations {
      switch JSONPatch.scope(of: operation, in: path) {
      case .outside:
        continue
      case .inside:
        kept.append(operation)
      case .removal(let from):
        kept.append(.remove(path: from))
      case .whole:
        return JSONPatch.wholeChange(
          of: path, existedBefore: existedBefore, value: value, parentIsObject: parentIsObject
        ).map { JSONPatch([$0]) }
      }
    }
    return kept.isEmpty ? nil : JSONPatch(kept)
  }

  private enum Scope {
    case outside, inside, whole
    /// A move out of the subtree: inside it, a removal of `from`.
    case removal(JSONPointer)
  }

  private static func scope(of operation: Operation, in subtree: JSONPointer) -> Scope {
    func inside(_ pointer: JSONPointer) -> Bool { subtree.isProperPrefix(of: pointer) }
    /// Whether writing or removing at `pointer` changes what `subtree` designates.
    func replacesSubtree(_ pointer: JSONPointer, shifting: Bool) -> Bool {
      pointer.isPrefix(of: subtree) || (shifting && shiftsSubtree(pointer, subtree))
    }
    switch operation {
    case .add(let path, _), .remove(let path):
      if replacesSubtree(path, shifting: true) { return .whole }
      return inside(path) ? .inside : .outside
    case .replace(let path, _):
      if replacesSubtree(path, shifting: false) { return .whole }
      return inside(path) ? .inside : .outside
    case .test(let path, _):
      return inside(path) ? .inside : .outside
    case .copy(let from, let path):
      if replacesSubtree(path, shifting: true) { return .whole }
      guard inside(path) else { return .outside }
      return inside(from) ? .inside : .whole
    case .move(let from, let path):
      if replacesSubtree(from, shifting: true) || replacesSubtree(path, shifting: true) {
        return .whole
      }
      switch (inside(from), inside(path)) {
      case (true, true): return .inside
      case (true, false): return .removal(from)
      case (false, true): return .whole
      case (false, false): return .outside
      }
    }
  }

  /// Whether inserting or removing at `pointer` shifts an array element on the way to
  /// `subtree`: `pointer` names a sibling at or before one of `subtree`'s ancestors (or
  /// `subtree` itself) in the same array. Tokens that only look like indices (object keys such
  /// as "1") count too: a needless whole-subtree operation is still correct.
  private static func shiftsSubtree(_ pointer: JSONPointer, _ subtree: JSONPointer) -> Bool {
    let depth = pointer.tokens.count - 1
    guard depth >= 0, depth < subtree.tokens.count,
      subtree.tokens.starts(with: pointer.tokens.prefix(depth)),
      let index = JSONPointer.arrayIndex(pointer.tokens[depth]),
      let subtreeIndex = JSONPointer.arrayIndex(subtree.tokens[depth])
    else { return false }
    return index <= subtreeIndex
  }

  private static func wholeChange(
    of path: JSONPointer, existedBefore: Bool?, value: () -> JSON?, parentIsObject: () -> Bool
  ) -> Operation? {
    guard let value = value() else {
      return existedBefore == false ? nil : .remove(path: path)
    }
    switch existedBefore {
    case true?: return .replace(path: path, value: value)
    case false?: return .add(path: path, value: value)
    case nil:
      if parentIsObject() {
        return .add(path: path, value: value)
      }
      return .replace(path: path, value: value)
    }
  }
}

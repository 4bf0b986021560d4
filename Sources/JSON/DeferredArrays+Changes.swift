// Changes to arrays left as text: a journal replayed onto a snapshot whose large arrays were
// left as text changes an element when it is parsed, not a tree built for the change.
extension DeferredArrays {
  /// Applies `patch` to `state`, in which the arrays left as text stand as empty arrays. An
  /// operation inside one element of such an array (a member of a note replaced, the note
  /// replaced whole) waits for that element's parse and is applied to it then, in order with
  /// the element's other changes. Any other operation that reaches such an array (an element
  /// added, removed, moved or copied, the array or a container around it replaced, removed,
  /// copied or tested) first parses the array into `state`, its waiting changes applied, and
  /// is applied there. Changes to different elements are independent, and an element's keep
  /// their order, so the result is the patches' applied in order to the whole tree.
  ///
  /// An operation whose element is not in the array fails when the array is read (its decode
  /// says so), as the operation would have failed here.
  package func apply(
    _ patch: JSONPatch, to state: inout JSON, retiring retired: inout [JSON]
  ) throws(JSONPatchError) {
    for (position, operation) in patch.operations.enumerated() {
      switch place(of: operation) {
      case .elsewhere:
        break
      case .element(let array, let element, let local):
        progress.withLock { $0.changes[array][element, default: []].append(local) }
        continue
      case .reaching(let arrays):
        for array in arrays { try parse(array, into: &state, retiring: &retired, at: position) }
      }
      do {
        try JSONPatch([operation]).apply(to: &state, retiring: &retired)
      } catch {
        var error = error
        error.operationIndex = position
        throw error
      }
    }
  }

  /// The changes waiting for the elements of array `index`, by element.
  func changes(of index: Int) -> [Int: [JSONPatch.Operation]] {
    progress.withLock { $0.changes[index] }
  }

  private enum Place {
    /// Reaches no array left as text.
    case elsewhere
    /// Inside one element of `array` only: `local` is the operation with its pointers made
    /// relative to that element.
    case element(array: Int, element: Int, local: JSONPatch.Operation)
    /// Reaches these arrays otherwise.
    case reaching([Int])
  }

  private func place(of operation: JSONPatch.Operation) -> Place {
    let pointers = [operation.path] + (operation.from.map { [$0] } ?? [])
    // Every array a pointer reaches, and for a pointer inside an element, which and where.
    var touched: Set<Int> = []
    var insides: [(array: Int, element: Int, rest: [String])] = []
    var wholly = false
    for index in arrays.indices where !isRead(index) {
      let tokens = arrays[index].tokens
      for pointer in pointers {
        if pointer.tokens.count <= tokens.count, tokens.starts(with: pointer.tokens) {
          // The array itself, or a container around it.
          touched.insert(index)
          wholly = true
        } else if pointer.tokens.starts(with: tokens) {
          touched.insert(index)
          guard let element = Self.position(pointer.tokens[tokens.count]) else {
            wholly = true
            continue
          }
          insides.append((index, element, Swift.Array(pointer.tokens[(tokens.count + 1)...])))
        }
      }
    }
    if touched.isEmpty { return .elsewhere }
    // Inside one element only, with every pointer of the operation.
    guard !wholly, insides.count == pointers.count,
      insides.allSatisfy({ $0.array == insides[0].array && $0.element == insides[0].element })
    else { return .reaching(touched.sorted()) }
    let path = JSONPointer(tokens: insides[0].rest)
    let from = insides.count > 1 ? JSONPointer(tokens: insides[1].rest) : nil
    let local: JSONPatch.Operation
    switch operation {
    case .replace(_, let value): local = .replace(path: path, value: value)
    case .test(_, let value): local = .test(path: path, value: value)
    // Adding or removing the element itself moves the elements after it.
    case .add(_, let value) where !path.tokens.isEmpty: local = .add(path: path, value: value)
    case .remove where !path.tokens.isEmpty: local = .remove(path: path)
    case .move where !path.tokens.isEmpty && from?.tokens.isEmpty == false:
      guard let from else { return .reaching(touched.sorted()) }
      local = .move(from: from, path: path)
    case .copy where !path.tokens.isEmpty:
      guard let from else { return .reaching(touched.sorted()) }
      local = .copy(from: from, path: path)
    default: return .reaching(touched.sorted())
    }
    return .element(array: insides[0].array, element: insides[0].element, local: local)
  }

  /// An array index token as RFC 6901 reads one: digits, no leading zero.
  private static func position(_ token: String) -> Int? {
    guard let first = token.utf8.first, token.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
      first != 0x30 || token.utf8.count == 1
    else { return nil }
    return Int(token)
  }

  private func isRead(_ index: Int) -> Bool { progress.withLock { $0.read[index] } }

  /// Array `index` parsed into `state` where its stand-in is, its waiting changes applied to
  /// its elements, and no longer left as text.
  private func parse(
    _ index: Int, into state: inout JSON, retiring retired: inout [JSON], at position: Int
  ) throws(JSONPatchError) {
    progress.withLock { $0.read[index] = true }
    let tree: JSON
    do {
      tree = try self.tree(of: index)
    } catch var error as JSONPatchError {
      error.operationIndex = position
      throw error
    } catch {
      throw JSONPatchError(
        kind: .pathNotFound, operationIndex: position, field: nil,
        reason: "the saved array at \(JSONPointer(tokens: arrays[index].tokens)) is not JSON")
    }
    try JSONPatch([.replace(path: JSONPointer(tokens: arrays[index].tokens), value: tree)])
      .apply(to: &state, retiring: &retired)
  }
}

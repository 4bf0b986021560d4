import JSON

extension IdentifiedArray where Element: Encodable {
  /// Publishes this array when `encoder` is one of a `PatchWalk`'s (see `CollectionProbe`);
  /// `false` for any other encoder. The walk cannot ask a view type whether it is an
  /// `IdentifiedArray`: the first `as?` of each type scans every protocol conformance in the
  /// binary, which was a quarter of the server's start-up. The encoder's type is compared
  /// first: an `as?` between two different types asks the runtime about conformances too.
  func publishIfWalked(by encoder: any Encoder) throws -> Bool {
    let type = Swift.type(of: encoder)
    if type == WalkLevel.self, let level = encoder as? WalkLevel {
      // An object was published here: the array replaces all of it.
      level.encodedAll()
      try level.walk.publish(self, at: level.path, old: .object(level.old))
      return true
    }
    if type == CollectionProbe.self, let probe = encoder as? CollectionProbe {
      probe.published = true
      try probe.walk.publish(self, at: probe.path, old: probe.old)
      return true
    }
    return false
  }

  /// Publishes this array at `path`: nothing when it is the revision published last time;
  /// the logged changes since then when the log reaches back and the published array is
  /// still the one they apply to; otherwise a full encoding, diffed locally. Nothing either
  /// when the walk's `old` is this very array's encoding (`oldIsCurrentEncoding`).
  func publish(into walk: PatchWalk, at path: JSONPointer, old: JSON?) throws {
    defer { walk.mark(path, revision) }
    if walk.oldIsCurrentEncoding, case .array? = old { return }
    guard case .array(let published)? = old, let last = walk.markedRevision(at: path),
      let changes = changes(since: last)
    else {
      walk.replace(at: path, old: old, with: try walk.encoder.encode(self))
      return
    }
    if changes.isEmpty { return }
    let start = walk.operationCount
    if try !replay(changes, published: published, into: walk, at: path) {
      walk.dropOperations(from: start)
      walk.replace(at: path, old: old, with: try walk.encoder.encode(self))
    }
  }

  /// Turns logged changes into operations, in order, with each element's current value.
  /// Positions in the log are those at the time of each change, which is exactly what
  /// operations applied in the same order expect. Returns `false` when the log cannot be
  /// replayed (a reset, or a count that does not add up).
  private func replay(
    _ changes: ArraySlice<ArrayChange<ID>>, published: [JSON], into walk: PatchWalk,
    at path: JSONPointer
  ) throws -> Bool {
    var count = published.count
    // Until the first insert or removal, positions are those of `published`, so an update
    // can be diffed against the old element (one field changed: one operation).
    var shifted = false
    var updated: Set<Int> = []
    for change in changes {
      switch change {
      case .update(let index, let id):
        guard let element = self[id: id], index < count else { continue }
        if !shifted && !updated.insert(index).inserted { continue }
        let new = try walk.encoder.encode(element)
        if !shifted && !walk.replacesUpdatedElements {
          walk.append(
            JSONPatch.diff(from: published[index], to: new), under: path.appending(index: index))
        } else {
          walk.append(.replace(path: path.appending(index: index), value: new))
        }
      case .insert(let index, let id):
        guard index <= count else { return false }
        let new = try self[id: id].map { try walk.encoder.encode($0) } ?? .null
        walk.append(.add(path: path.appending(index: index), value: new))
        count += 1
        shifted = true
      case .remove(let index, _):
        guard index < count else { return false }
        walk.append(.remove(path: path.appending(index: index)))
        count -= 1
        shifted = true
      case .reset:
        return false
      }
    }
    return count == self.count
  }
}

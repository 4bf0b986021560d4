import JSON

extension IdentifiedArray where Element: Encodable {
  /// Publishes this array when `encoder` is one of a `PatchWalk`'s (see `CollectionProbe`), or
  /// hands itself to an `ArrayLocator`; `false` for any other encoder. The walk cannot ask a
  /// view type whether it is an `IdentifiedArray`: the first `as?` of each type scans every
  /// protocol conformance in the binary, which was a quarter of the server's start-up. The
  /// encoder's type is compared first: an `as?` between two different types asks the runtime
  /// about conformances too.
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
    if type == ArrayLocator.self, let locator = encoder as? ArrayLocator {
      try locator.found(self)
      return true
    }
    return false
  }

  /// Whether a view's first encoding leaves this array's elements out (`ArrayElision`); it
  /// then encodes as an empty array.
  func isLeftOut(by encoder: any Encoder) -> Bool {
    guard let key = ArrayElision.key, let elision = encoder.userInfo[key] as? ArrayElision else {
      return false
    }
    return elision.leavesOut(count: count, at: encoder.codingPath)
  }

  /// Publishes this array at `path`: nothing when it is the revision published last time;
  /// the logged changes since then when the log reaches back and the published array is
  /// still the one they apply to; otherwise the whole array. Nothing either when the walk's
  /// `old` is this very array's encoding (`oldIsCurrentEncoding`).
  ///
  /// An array whose elements the publisher left to the state (`ArrayMark.elidedCount`) is
  /// published from its log alone: the count is in the mark, and the log keeps each element as
  /// it was before it changed, which an update is diffed against (the same operations as when
  /// the old element is read from the published JSON). Those operations are for the clients
  /// only (`PatchWalk.clientOnly(from:)`); what takes them back is recorded from the log too.
  func publish(into walk: PatchWalk, at path: JSONPointer, old: JSON?) throws {
    if walk.oldIsCurrentEncoding, case .array? = old {
      walk.mark(path, ArrayMark(revision: revision, elidedCount: walk.leftOutAtStart(path)))
      return
    }
    let mark = walk.markedRevision(at: path)
    if let mark, let count = mark.elidedCount {
      if let changes = changes(since: mark.revision) {
        if changes.isEmpty {
          walk.mark(path, mark)
          return
        }
        let start = walk.operationCount
        if try replayLeftOut(changes, count: count, into: walk, at: path) {
          walk.clientOnly(from: start)
          walk.mark(path, ArrayMark(revision: revision, elidedCount: self.count))
          return
        }
        walk.dropOperations(from: start)
      }
      try publishWhole(into: walk, at: path, old: old, wasLeftOut: true)
      return
    }
    guard case .array(let published)? = old, let mark, let changes = changes(since: mark.revision)
    else {
      try publishWhole(into: walk, at: path, old: old, wasLeftOut: false)
      return
    }
    if changes.isEmpty {
      walk.mark(path, mark)
      return
    }
    let start = walk.operationCount
    if try !replay(changes, published: published, into: walk, at: path) {
      walk.dropOperations(from: start)
      try publishWhole(into: walk, at: path, old: old, wasLeftOut: false)
      return
    }
    walk.mark(path, ArrayMark(revision: revision, elidedCount: nil))
  }

  /// Publishes the whole array (its log does not reach back, or it was reset), and decides
  /// whether the publisher keeps its elements (`ArrayElision`). When the clients hold elements
  /// the publisher does not (`wasLeftOut`), the array is replaced whole (there is no old JSON
  /// to diff against) and its reversal cannot be recorded; when it stays left out, that whole
  /// value is never encoded here: the patch is written with it from the state (`HeldValue`).
  /// Otherwise diffed locally as before.
  private func publishWhole(
    into walk: PatchWalk, at path: JSONPointer, old: JSON?, wasLeftOut: Bool
  ) throws {
    let leavesOut = count >= walk.elisionThreshold
    if wasLeftOut && leavesOut {
      // The kept JSON already holds an empty array here, and the clients get the elements
      // written from the state (`PatchWalk.hold`).
      walk.invalidateMarks(under: path)
      walk.markReversalIncomplete()
      walk.hold(at: path)
      walk.mark(path, ArrayMark(revision: revision, elidedCount: count))
      return
    }
    let new = try walk.encoder.encode(self)
    if wasLeftOut {
      walk.invalidateMarks(under: path)
      walk.markReversalIncomplete()
      walk.append(.replace(path: path, value: new))
    } else if leavesOut {
      let start = walk.operationCount
      walk.replace(at: path, old: old, with: new)
      walk.clientOnly(from: start)
      // What the kept JSON gets instead; its reversal keeps the old elements.
      let empty = JSON.array([])
      walk.keptEdit(
        old == nil ? .add(path: path, value: empty) : .replace(path: path, value: empty))
    } else {
      walk.replace(at: path, old: old, with: new)
    }
    walk.mark(path, ArrayMark(revision: revision, elidedCount: leavesOut ? count : nil))
  }

  /// Turns logged changes into operations, in order, with each element's current value.
  /// Positions in the log are those at the time of each change, which is exactly what
  /// operations applied in the same order expect. Returns `false` when the log cannot be
  /// replayed (a reset, or a count that does not add up).
  private func replay(
    _ changes: ArraySlice<ArrayChange<Element>>, published: [JSON], into walk: PatchWalk,
    at path: JSONPointer
  ) throws -> Bool {
    var count = published.count
    // Until the first insert or removal, positions are those of `published`, so an update
    // can be diffed against the old element (one field changed: one operation).
    var shifted = false
    var updated: Set<Int> = []
    for change in changes {
      switch change {
      case .update(let index, let id, _):
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
      case .remove(let index, _, _):
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

  /// `replay` for an array whose elements the publisher left to the state: the same
  /// operations, the old element of an update encoded from the log rather than read from the
  /// published JSON. When the walk records reversals, what takes the changes back is recorded
  /// from the log as well, change by change (the true history, newest taken back first),
  /// which brings the clients' array back to the published revision whatever form the
  /// operations took.
  private func replayLeftOut(
    _ changes: ArraySlice<ArrayChange<Element>>, count published: Int, into walk: PatchWalk,
    at path: JSONPointer
  ) throws -> Bool {
    var count = published
    var shifted = false
    var updated: Set<Int> = []
    let records = walk.recordsReversal
    var reversal = JSONPatchReversal()
    for change in changes {
      switch change {
      case .update(let index, let id, let old):
        var oldJSON: JSON?
        if records {
          let encoded = try walk.encoder.encode(old)
          reversal.recordReplacement(in: path, at: index, of: encoded)
          oldJSON = encoded
        }
        guard let element = self[id: id], index < count else { continue }
        if !shifted && !updated.insert(index).inserted { continue }
        let new = try walk.encoder.encode(element)
        if !shifted && !walk.replacesUpdatedElements {
          let before = try oldJSON ?? walk.encoder.encode(old)
          walk.append(JSONPatch.diff(from: before, to: new), under: path.appending(index: index))
        } else {
          walk.append(.replace(path: path.appending(index: index), value: new))
        }
      case .insert(let index, let id):
        guard index <= count else { return false }
        if records { reversal.recordInsertion(into: path, at: index) }
        let new = try self[id: id].map { try walk.encoder.encode($0) } ?? .null
        walk.append(.add(path: path.appending(index: index), value: new))
        count += 1
        shifted = true
      case .remove(let index, _, let old):
        guard index < count else { return false }
        if records {
          reversal.recordRemoval(from: path, at: index, of: try walk.encoder.encode(old))
        }
        walk.append(.remove(path: path.appending(index: index)))
        count -= 1
        shifted = true
      case .reset:
        return false
      }
    }
    guard count == self.count else { return false }
    if records { walk.recordReversal(reversal) }
    return true
  }
}

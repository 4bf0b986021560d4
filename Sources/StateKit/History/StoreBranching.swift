import JSON

/// The branching side of a store's history: skipping a past action, the private state at a
/// version (for a fork), and the entries held (for blame). Apart from `AnyStore` so that the
/// runtime's protocol stays as it is; the server asks `store as? any BranchingStore`.
@StateActor
public protocol BranchingStore: AnyStore {
  /// Turns the action that made `version` off (`skipped`) or on again and recomputes the
  /// state; returns the store's version after (a new one when the view changed).
  @discardableResult
  func skip(entryAt version: UInt64, skipped: Bool, cause: JSON?) throws(SkipError) -> UInt64
  /// The private state at `version`, encoded (`Store.state(at:)`): what a fork starts from.
  func privateState(at version: UInt64) throws(HistoryError) -> JSON
}

/// Why `history/skip` cannot toggle an entry.
public enum SkipError: Error, Equatable, Sendable {
  /// The store keeps no history.
  case off
  /// The version is newer than the store's current one.
  case future(current: UInt64)
  /// No action held made `version` (a rewind or skip did, or no entry has it).
  case notAnAction(version: UInt64)
  /// The action can no longer be recomputed: history was trimmed before it, or a rewind after
  /// it set the state regardless. `oldest` is the oldest version whose action can be toggled
  /// (nil: none can).
  case notRecomputable(oldest: UInt64?, rewound: UInt64?)
}

extension Store: BranchingStore {
  /// `history/skip`: the action entry that made `version` is turned off (or on again), and the
  /// state becomes the checkpoint with every held action that is not skipped reduced again at
  /// its recorded `ReduceTime`, rewinds restoring what they restored. No effect is started
  /// (state only) and effects in flight keep running. Subscribers get one ordinary patch from
  /// the current view to the recomputed one, and a `skip` entry is kept.
  ///
  /// ```swift
  /// try store.skip(entryAt: 2, skipped: true, cause: nil)   // as if action 2 never happened
  /// ```
  @discardableResult
  public func skip(entryAt version: UInt64, skipped: Bool, cause: JSON?) throws(SkipError)
    -> UInt64
  {
    guard let history, history.keepsEntries, let base = historyBase else { throw .off }
    guard version <= self.version else { throw .future(current: self.version) }
    let held = history.held
    // A rewind restores a state regardless of what came before it: only the actions after the
    // last one can change the state now.
    let lastRewind = held.lastIndex { if case .rewind = $0.kind { true } else { false } }
    let first = lastRewind.map { $0 + 1 } ?? 0
    let oldest = held[first...].first { $0.kind == .action }?.version
    guard let target = Self.action(thatMade: version, in: held, after: history.firstVersion)
    else {
      // The action that made the checkpoint's version, or an older one, left with its entry.
      if version > 0, version <= history.firstVersion {
        throw .notRecomputable(oldest: oldest, rewound: nil)
      }
      throw .notAnAction(version: version)
    }
    guard target >= first else {
      throw .notRecomputable(oldest: oldest, rewound: lastRewind.map { held[$0].version })
    }
    if held[target].skipped == skipped { return self.version }
    _ = history.setSkipped(held[target].seq, skipped)
    let began = ReduceTime.nanoseconds()
    var recomputed = base
    for (index, item) in held.enumerated() {
      let off = index == target ? skipped : item.skipped
      if case .rewind = item.kind, let restored = item.payload as? F.State {
        recomputed = restored
      } else if case .action = item.kind, !off, let action = Self.action(in: item.payload) {
        let saved = ReduceTime.set(item.at)
        _ = feature.reduce(into: &recomputed, action: action)
        ReduceTime.restore(saved)
      }
    }
    state = recomputed
    let publication = publish(cause: cause)
    keep(
      HistoryLog.Item(
        seq: history.takeSeq(), kind: .skip(entry: held[target].seq, skipped: skipped),
        version: self.version, payload: (),
        origin: HistoryEntry.Origin(request: cause, action: nil),
        patch: publication?.patch ?? [], events: [], at: ReduceTime.milliseconds(began),
        duration: ReduceTime.duration(since: began)), in: history)
    return self.version
  }

  /// The index of the action entry that raised the store to `version` (an action that changed
  /// nothing shares the version before it, and is not the one that made it).
  private static func action(
    thatMade version: UInt64, in held: [HistoryLog.Item], after first: UInt64
  ) -> Int? {
    var before = first
    for (index, item) in held.enumerated() {
      if item.kind == .action, item.version == version, before < version { return index }
      before = item.version
    }
    return nil
  }

  public func privateState(at version: UInt64) throws(HistoryError) -> JSON {
    let past = try state(at: version)
    do {
      return try JSONValueEncoder().encode(past)
    } catch {
      report("the state of store \(id) at version \(version) does not encode: \(error)")
      return .null
    }
  }
}

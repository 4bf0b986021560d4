import JSON

/// A store's recent past, bounded: the last `limit` entries (at least that many, at most
/// `limit` plus one snapshot interval), where each entry and effect is reported, and where
/// the snapshots of the state are (the states themselves live in the store, typed).
///
/// The state at any version still held is the nearest snapshot before it with the actions in
/// between reduced again, as the Elm debugger does (a snapshot every 64 messages). Snapshots
/// are the Swift state values themselves: a copy-on-write value costs nothing to keep until
/// the reducer next edits it, and then the edited containers are copied once per interval
/// rather than encoded at every action. The price is that reducers must be deterministic
/// given the action and the reduce's time stamp (`ReduceTime`); replay asks the same.
///
/// Not generic, on purpose: the store's code runs unspecialized behind `AnyStore`, where every
/// generic type it touches costs a metadata lookup per use; the per-action path here touches
/// none (it was about a third of history's cost). Entries are kept in segments, one per
/// snapshot, so forgetting the oldest snapshot drops one segment and moves no entry.
@MainActor
final class HistoryLog {
  struct Item {
    var seq: UInt64
    var kind: HistoryEntry.Kind
    var version: UInt64
    /// The action, as the feature's `Action` (cast back by the store).
    var action: (any Sendable)?
    var origin: HistoryEntry.Origin
    var patch: [JSON]
    var events: [JSON]
    var at: Int64
    var duration: Duration
    var effects: [EffectLife] = []
  }

  /// Entries kept per store; 0 keeps none (only `sink` hears them).
  let limit: Int
  let interval: Int
  /// `segments[k]`: the entries after snapshot `k`, up to snapshot `k + 1`.
  private(set) var segments: [[Item]]
  /// Snapshot `k` is the state after entry `afters[k]`, at `versions[k]`.
  private(set) var afters: [UInt64]
  private(set) var versions: [UInt64]
  /// The seq the next entry gets.
  private(set) var nextSeq: UInt64 = 1
  /// The seq of the entry being made (taken, not yet kept).
  var making: UInt64?
  /// Effects started by the action being reduced: they join its entry when it is kept, and
  /// are reported after it.
  var starting: [EffectLife] = []
  let sink: (@MainActor (HistoryRecord) -> Void)?

  /// A log whose first snapshot is the store's state now, at `version`.
  init(limit: Int, interval: Int = 64, version: UInt64, sink: (@MainActor (HistoryRecord) -> Void)?)
  {
    self.limit = max(0, limit)
    self.interval = max(1, min(interval, max(1, limit)))
    self.segments = [[]]
    self.afters = [0]
    self.versions = [version]
    self.sink = sink
    segments[0].reserveCapacity(self.interval)
  }

  var keepsEntries: Bool { limit > 0 }
  /// The oldest version whose state can be produced.
  var firstVersion: UInt64 { versions[0] }
  var count: Int { Int(nextSeq - 1 - afters[0]) }

  func takeSeq() -> UInt64 {
    let seq = nextSeq
    nextSeq += 1
    making = seq
    return seq
  }

  /// Keeps an entry. Returns whether the store must now add a snapshot of its state (the
  /// interval is full, or the entry is a rewind, which reducing again cannot reproduce) and
  /// how many of the oldest snapshots it must forget.
  func append(_ item: Item) -> (snapshot: Bool, forget: Int) {
    making = nil
    guard keepsEntries else { return (false, 0) }
    let seq = item.seq
    let version = item.version
    let isRewind = item.kind != .action && item.kind != .events
    segments[segments.count - 1].append(item)
    let snapshot = segments[segments.count - 1].count >= interval || isRewind
    if snapshot {
      segments.append([])
      segments[segments.count - 1].reserveCapacity(interval)
      afters.append(seq)
      versions.append(version)
    }
    // Forget the oldest snapshot while at least `limit` entries remain after the next one.
    var forget = 0
    while afters.count - forget >= 2, seq - afters[forget + 1] >= UInt64(limit) { forget += 1 }
    if forget > 0 {
      segments.removeFirst(forget)
      afters.removeFirst(forget)
      versions.removeFirst(forget)
    }
    return (snapshot, forget)
  }

  /// Where entry `seq` is, if still held.
  private func position(of seq: UInt64) -> (segment: Int, index: Int)? {
    guard seq > afters[0], seq < nextSeq else { return nil }
    var segment = afters.count - 1
    while afters[segment] >= seq { segment -= 1 }
    let index = Int(seq - afters[segment] - 1)
    return index < segments[segment].count ? (segment, index) : nil
  }

  /// The seq of the first entry with a version above `version` (`nextSeq` if none); versions
  /// never fall along the log.
  func firstSeq(after version: UInt64) -> UInt64 {
    guard let segment = segments.firstIndex(where: { ($0.last?.version ?? 0) > version }) else {
      return nextSeq
    }
    let items = segments[segment]
    var low = 0
    var high = items.count
    while low < high {
      let middle = (low + high) / 2
      if items[middle].version <= version { low = middle + 1 } else { high = middle }
    }
    return afters[segment] + UInt64(low) + 1
  }

  /// Entries from seq `start` on, at most `limit` of them, oldest first.
  func items(from start: UInt64, limit: Int) -> [Item] {
    var found: [Item] = []
    var seq = max(start, afters[0] + 1)
    while found.count < limit, let (segment, index) = position(of: seq) {
      let items = segments[segment]
      let taken = items[index..<min(items.count, index + limit - found.count)]
      found += taken
      seq += UInt64(taken.count)
    }
    return found
  }

  /// The entry `seq`, if still held.
  func item(_ seq: UInt64) -> Item? {
    position(of: seq).map { segments[$0.segment][$0.index] }
  }

  /// The snapshot to start from (its index) and the entries to reduce again to reach the
  /// last state at `version`, which must be between `firstVersion` and the current version.
  func path(to version: UInt64) -> (snapshot: Int, items: ArraySlice<Item>) {
    // The last state at `version` is the one after the last entry whose version is at most
    // `version` (or the oldest snapshot, when no entry is).
    let end = max(firstSeq(after: version) - 1, afters[0])
    var snapshot = afters.count - 1
    while snapshot > 0, afters[snapshot] > end { snapshot -= 1 }
    return (snapshot, segments[snapshot][0..<Int(end - afters[snapshot])])
  }

  /// Records an effect's start or end on the entry of the action that started it.
  func update(_ life: EffectLife) {
    guard let seq = life.action, let (segment, index) = position(of: seq) else { return }
    if let existing = segments[segment][index].effects.firstIndex(where: {
      $0.effect == life.effect
    }) {
      segments[segment][index].effects[existing] = life
    } else {
      segments[segment][index].effects.append(life)
    }
  }
}

import JSON

/// A store's recent past, bounded: the last `limit` entries (at least that many, at most
/// `limit` plus one snapshot interval) and the state at every `interval`-th entry.
///
/// The state at any version still held is the nearest snapshot before it with the actions in
/// between reduced again, as the Elm debugger does (a snapshot every 64 messages). Snapshots
/// are the Swift state values themselves: a copy-on-write value costs nothing to keep until
/// the reducer next edits it, and then the edited containers are copied once per interval
/// rather than encoded at every action. The price is that reducers must be deterministic
/// given the action and the reduce's time stamp (`ReduceTime`); replay asks the same.
///
/// Entries are stored in segments, one per snapshot (the entries after it, up to the next),
/// so forgetting the oldest snapshot drops one segment without moving the entries kept.
struct HistoryRing<State, Action> {
  struct Item {
    var seq: UInt64
    var kind: HistoryEntry.Kind
    var version: UInt64
    var action: Action?
    var origin: HistoryEntry.Origin
    var patch: [JSON]
    var events: [JSON]
    var at: Int64
    var duration: Duration
    var effects: [EffectLife] = []
  }

  /// The state after entry `after` (0: before the first), at `version`.
  struct Snapshot {
    var after: UInt64
    var state: State
    var version: UInt64
  }

  /// A snapshot and the entries after it, up to the next snapshot.
  struct Segment {
    var snapshot: Snapshot
    var items: [Item] = []
  }

  let limit: Int
  let interval: Int
  private(set) var segments: [Segment]
  /// The seq the next entry gets.
  private(set) var nextSeq: UInt64

  /// A ring starting at `state` (the store's state when history began) at `version`.
  init(limit: Int, interval: Int = 64, state: State, version: UInt64, lastSeq: UInt64 = 0) {
    self.limit = max(1, limit)
    self.interval = max(1, min(interval, self.limit))
    self.segments = [Segment(snapshot: Snapshot(after: lastSeq, state: state, version: version))]
    self.nextSeq = lastSeq + 1
    segments[0].items.reserveCapacity(self.interval)
  }

  /// The oldest version whose state can be produced.
  var firstVersion: UInt64 { segments[0].snapshot.version }
  var snapshots: [Snapshot] { segments.map(\.snapshot) }
  var items: [Item] { segments.flatMap(\.items) }
  var count: Int { Int(nextSeq - 1 - segments[0].snapshot.after) }

  /// Appends an entry (its `seq` must be `nextSeq`); `state` is the state after it, kept as a
  /// snapshot when the interval is full or when the entry is not an action that reducing
  /// again would reproduce (a rewind).
  mutating func append(_ item: consuming Item, state: @autoclosure () -> State) {
    let seq = item.seq
    let version = item.version
    let isRewind = item.kind != .action && item.kind != .events
    let last = segments.count - 1
    segments[last].items.append(item)
    nextSeq = seq + 1
    if segments[last].items.count >= interval || isRewind {
      var segment = Segment(snapshot: Snapshot(after: seq, state: state(), version: version))
      segment.items.reserveCapacity(interval)
      segments.append(segment)
    }
    // Forget the oldest snapshot while at least `limit` entries remain after the next one.
    while segments.count >= 2, seq - segments[1].snapshot.after >= UInt64(limit) {
      segments.removeFirst()
    }
  }

  /// Where entry `seq` is, if still held.
  private func position(of seq: UInt64) -> (segment: Int, index: Int)? {
    guard seq > segments[0].snapshot.after, seq < nextSeq else { return nil }
    var segment = segments.count - 1
    while segments[segment].snapshot.after >= seq { segment -= 1 }
    return (segment, Int(seq - segments[segment].snapshot.after - 1))
  }

  /// The seq of the first entry with a version above `version` (`nextSeq` if none); versions
  /// never fall along the ring.
  func firstSeq(after version: UInt64) -> UInt64 {
    guard
      let segment = segments.firstIndex(where: { ($0.items.last?.version ?? 0) > version })
    else { return nextSeq }
    let items = segments[segment].items
    var low = 0
    var high = items.count
    while low < high {
      let middle = (low + high) / 2
      if items[middle].version <= version { low = middle + 1 } else { high = middle }
    }
    return segments[segment].snapshot.after + UInt64(low) + 1
  }

  /// Entries from seq `start` on, at most `limit` of them, oldest first.
  func items(from start: UInt64, limit: Int) -> [Item] {
    var found: [Item] = []
    var seq = max(start, segments[0].snapshot.after + 1)
    while found.count < limit, let (segment, index) = position(of: seq) {
      let items = segments[segment].items
      let taken = items[index..<min(items.count, index + limit - found.count)]
      found += taken
      seq += UInt64(taken.count)
    }
    return found
  }

  /// The entry `seq`, if still held.
  func item(_ seq: UInt64) -> Item? {
    position(of: seq).map { segments[$0.segment].items[$0.index] }
  }

  /// The snapshot to start from and the actions to reduce again to reach the last state at
  /// `version`, which must be between `firstVersion` and the current version.
  func path(to version: UInt64) -> (from: Snapshot, actions: ArraySlice<Item>) {
    // The last state at `version` is the one after the last entry whose version is at most
    // `version` (or the oldest snapshot, when no entry is).
    let end = max(firstSeq(after: version) - 1, segments[0].snapshot.after)
    var segment = segments.count - 1
    while segment > 0, segments[segment].snapshot.after > end { segment -= 1 }
    let snapshot = segments[segment].snapshot
    return (snapshot, segments[segment].items[0..<Int(end - snapshot.after)])
  }

  /// Records an effect's start or end on the entry of the action that started it.
  mutating func update(_ life: EffectLife) {
    guard let seq = life.action, let (segment, index) = position(of: seq) else { return }
    if let existing = segments[segment].items[index].effects.firstIndex(where: {
      $0.effect == life.effect
    }) {
      segments[segment].items[index].effects[existing] = life
    } else {
      segments[segment].items[index].effects.append(life)
    }
  }
}

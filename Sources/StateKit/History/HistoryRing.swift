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

  let limit: Int
  let interval: Int
  private(set) var items: [Item] = []
  private(set) var snapshots: [Snapshot]
  /// The seq the next entry gets.
  private(set) var nextSeq: UInt64

  /// A ring starting at `state` (the store's state when history began) at `version`.
  init(limit: Int, interval: Int = 64, state: State, version: UInt64, lastSeq: UInt64 = 0) {
    self.limit = max(1, limit)
    self.interval = max(1, min(interval, self.limit))
    self.snapshots = [Snapshot(after: lastSeq, state: state, version: version)]
    self.nextSeq = lastSeq + 1
  }

  /// The oldest version whose state can be produced.
  var firstVersion: UInt64 { snapshots[0].version }

  /// Appends an entry (its `seq` must be `nextSeq`); `state` is the state after it, kept as a
  /// snapshot when the interval is full or when the entry is not an action that reducing
  /// again would reproduce (a rewind).
  mutating func append(_ item: Item, state: @autoclosure () -> State) {
    items.append(item)
    nextSeq = item.seq + 1
    let last = snapshots[snapshots.count - 1]
    if item.seq - last.after >= UInt64(interval) || item.kind != .action && item.kind != .events {
      snapshots.append(Snapshot(after: item.seq, state: state(), version: item.version))
    }
    trim()
  }

  /// Drops the oldest snapshot and its entries while at least `limit` entries remain after.
  private mutating func trim() {
    var drop = 0
    while snapshots.count >= 2, nextSeq - 1 - snapshots[1].after >= UInt64(limit) {
      snapshots.removeFirst()
      drop = Int(snapshots[0].after - (items.first?.seq ?? 1) + 1)
      items.removeFirst(min(drop, items.count))
    }
  }

  /// The index in `items` of entry `seq`, if still held.
  func index(of seq: UInt64) -> Int? {
    guard let first = items.first?.seq, seq >= first, seq - first < UInt64(items.count) else {
      return nil
    }
    return Int(seq - first)
  }

  /// Indices of the entries with a version above `version`, oldest first (binary search:
  /// versions never fall along the ring).
  func firstIndex(after version: UInt64) -> Int {
    var low = 0
    var high = items.count
    while low < high {
      let middle = (low + high) / 2
      if items[middle].version <= version { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// The snapshot to start from and the actions to reduce again to reach the last state at
  /// `version`, which must be between `firstVersion` and the current version.
  func path(to version: UInt64) -> (from: Snapshot, actions: ArraySlice<Item>) {
    // The last state at `version` is the one after the last entry whose version is at most
    // `version` (or the oldest snapshot, when no entry is).
    let end = firstIndex(after: version)
    let position = end == 0 ? snapshots[0].after : items[end - 1].seq
    var snapshot = snapshots[0]
    for candidate in snapshots.reversed() where candidate.after <= position {
      snapshot = candidate
      break
    }
    let start = index(of: snapshot.after + 1) ?? end
    return (snapshot, items[start..<max(start, end)])
  }

  /// Records an effect's start or end on the entry of the action that started it.
  mutating func update(_ life: EffectLife) {
    guard let seq = life.action, let index = index(of: seq) else { return }
    if let existing = items[index].effects.firstIndex(where: { $0.effect == life.effect }) {
      items[index].effects[existing] = life
    } else {
      items[index].effects.append(life)
    }
  }
}

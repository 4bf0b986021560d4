import JSON

/// A store's recent past, bounded: the last `limit` entries or a few more (up to
/// `limit + interval - 1`), where each entry and effect is reported, and a snapshot every
/// `interval` entries (64, or `limit` when smaller): the published view and the private state
/// after that entry. The oldest snapshot is the checkpoint: the state before the oldest entry
/// held, the oldest one history can produce.
///
/// A past state is the nearest snapshot at or before it, brought forward by at most
/// `interval - 1` entries: `state/get` at a past version applies their patches to the
/// snapshot's view (`view(at:)`), `store/rewind` reduces their actions again onto the
/// snapshot's private state at their recorded times (`Store.state(at:)`). Nothing is reduced
/// twice on the way: entries leave the log a whole interval at a time, with the snapshot
/// before them, once the entries after the next snapshot reach `limit`. (The log used to hold
/// exactly `limit` entries and reduce each one that fell off onto a checkpoint of its own: a
/// fifth of a pipelined counter increment, with the patches it had to keep to bridge the
/// oldest view snapshot to that checkpoint.)
///
/// A snapshot costs one retain of each value: the view is the store's published JSON value and
/// the state the store's own, sharing every unchanged part with the live ones; the next
/// publication and the next reduce copy the containers they edit, once per interval (see
/// README, "History, time travel and replay", for what that costs a state of 100,000 notes).
///
/// Not generic, on purpose: the store's code runs unspecialized behind `AnyStore`, where every
/// generic type it touches costs a metadata lookup per use; the per-action path here touches
/// none. The store's actions and states are kept as `any Sendable` and cast back only when a
/// past state is asked for.
@MainActor
final class HistoryLog {
  struct Item {
    var seq: UInt64
    var kind: HistoryEntry.Kind
    var version: UInt64
    /// The action, as the feature's `Action` (cast back by the store); for a rewind, the
    /// state it restored, as the feature's `State`.
    var payload: (any Sendable)?
    var origin: HistoryEntry.Origin
    var patch: [JSON]
    var events: [JSON]
    var at: Int64
    var duration: Duration
    var effects: [EffectLife] = []
  }

  /// The store after entry `seq` (0: when history started), at `version`: its published view
  /// and its private state (the feature's `State`), where a past state starts.
  struct Snapshot {
    var seq: UInt64
    var version: UInt64
    var view: JSON
    var state: any Sendable
  }

  /// Entries between two snapshots at most (the Elm debugger's interval).
  static let snapshotInterval: UInt64 = 64

  /// Entries kept per store at least, once that many were made; 0 keeps none (only `sink`
  /// hears them).
  let limit: Int
  /// Entries between two snapshots: `snapshotInterval`, or `limit` when smaller, so that a
  /// small log holds fewer than twice its limit.
  let interval: UInt64
  /// The entries held, a ring of `limit + interval` places once full: the oldest is at
  /// `head`, and there are `count` of them.
  private var items: [Item] = []
  private var head = 0
  private(set) var count = 0
  /// The checkpoint: the state after entry `baseSeq` (0: before the first), at `baseVersion`.
  private(set) var baseSeq: UInt64 = 0
  private(set) var baseVersion: UInt64
  /// The seq the next entry gets.
  private(set) var nextSeq: UInt64 = 1
  /// The seq of the entry being made (taken, not yet kept).
  var making: UInt64?
  /// Effects started by the action being reduced: they join its entry when it is kept, and
  /// are reported after it.
  var starting: [EffectLife] = []
  let sink: (@MainActor (HistoryRecord) -> Void)?
  /// A snapshot every `interval` entries, oldest first; the first is the checkpoint: at most
  /// `limit / interval + 2`.
  private(set) var snapshots: [Snapshot] = []

  /// A log whose checkpoint is the store now: `state` (the feature's `State`) at `version`,
  /// published as `view`.
  init(
    limit: Int, version: UInt64, view: JSON, state: any Sendable,
    sink: (@MainActor (HistoryRecord) -> Void)?
  ) {
    self.limit = max(0, limit)
    self.interval = max(1, min(Self.snapshotInterval, UInt64(self.limit)))
    self.baseVersion = version
    self.sink = sink
    if self.limit > 0 {
      snapshots = [Snapshot(seq: 0, version: version, view: view, state: state)]
    }
  }

  var keepsEntries: Bool { limit > 0 }
  /// The oldest version whose state can be produced.
  var firstVersion: UInt64 { baseVersion }

  func takeSeq() -> UInt64 {
    let seq = nextSeq
    nextSeq += 1
    making = seq
    return seq
  }

  /// Keeps an entry; every `interval` entries asks `snapshot` for the store's view and state
  /// after it, and lets the oldest interval of entries go once the log holds `limit` after
  /// the snapshot that follows them.
  func append(_ item: consuming Item, snapshot: () -> (view: JSON, state: any Sendable)) {
    making = nil
    guard keepsEntries else { return }
    let (seq, version) = (item.seq, item.version)
    let capacity = limit + Int(interval)
    if items.count < capacity {
      items.append(item)
    } else {
      let index = head + count
      items[index < capacity ? index : index - capacity] = item
    }
    count += 1
    if seq - snapshots[snapshots.count - 1].seq >= interval {
      let (view, state) = snapshot()
      snapshots.append(Snapshot(seq: seq, version: version, view: view, state: state))
    }
    // The second snapshot becomes the checkpoint when the entries after it are `limit`.
    guard snapshots.count > 1, seq - snapshots[1].seq >= UInt64(limit) else { return }
    let dropped = Int(snapshots[1].seq - baseSeq)
    snapshots.removeFirst()
    baseSeq = snapshots[0].seq
    baseVersion = snapshots[0].version
    head = (head + dropped) % capacity
    count -= dropped
  }

  /// The published view at `version` (between `firstVersion` and the current one): the
  /// nearest snapshot at or before it, with the patches of the entries after it applied up
  /// to `version`. Nil when no snapshot is kept (`limit` 0) or a patch does not apply.
  func view(at version: UInt64) -> JSON? {
    guard let index = snapshots.lastIndex(where: { $0.version <= version }) else { return nil }
    let snapshot = snapshots[index]
    var view = snapshot.view
    do {
      var offset = Int(snapshot.seq - baseSeq)
      while offset < count {
        let item = self[offset]
        guard item.version <= version else { break }
        if !item.patch.isEmpty { try JSONPatch(json: .array(item.patch)).apply(to: &view) }
        offset += 1
      }
    } catch {
      return nil
    }
    return view
  }

  /// Where the private state at `version` (between `firstVersion` and the current one) starts:
  /// the last snapshot at or before it, and the entries after it to bring forward, those up to
  /// the last one whose version is at most `version` (fewer than `interval`).
  func path(to version: UInt64) -> (state: any Sendable, items: [Item])? {
    guard let snapshot = snapshots.last(where: { $0.version <= version }) else { return nil }
    let start = Int(snapshot.seq - baseSeq)
    let end = Int(firstSeq(after: version) - baseSeq - 1)
    return (snapshot.state, (start..<max(start, end)).map { self[$0] })
  }

  /// The entry `offset` places after the oldest held.
  private subscript(offset: Int) -> Item {
    let index = head + offset
    return items[index < items.count ? index : index - items.count]
  }

  /// The offset from the oldest held of entry `seq`, if still held.
  private func offset(of seq: UInt64) -> Int? {
    guard seq > baseSeq, seq < nextSeq else { return nil }
    let offset = Int(seq - baseSeq - 1)
    return offset < count ? offset : nil
  }

  /// The seq of the first entry with a version above `version` (`nextSeq` if none); versions
  /// never fall along the log.
  func firstSeq(after version: UInt64) -> UInt64 {
    var low = 0
    var high = count
    while low < high {
      let middle = (low + high) / 2
      if self[middle].version <= version { low = middle + 1 } else { high = middle }
    }
    return baseSeq + UInt64(low) + 1
  }

  /// Entries from seq `start` on, at most `limit` of them, oldest first.
  func items(from start: UInt64, limit: Int) -> [Item] {
    guard let first = offset(of: max(start, baseSeq + 1)) else { return [] }
    return (first..<min(count, first + limit)).map { self[$0] }
  }

  /// The entry `seq`, if still held.
  func item(_ seq: UInt64) -> Item? {
    offset(of: seq).map { self[$0] }
  }

  /// Records an effect's start or end on the entry of the action that started it.
  func update(_ life: EffectLife) {
    guard let seq = life.action, let offset = offset(of: seq) else { return }
    let index = head + offset < items.count ? head + offset : head + offset - items.count
    if let existing = items[index].effects.firstIndex(where: { $0.effect == life.effect }) {
      items[index].effects[existing] = life
    } else {
      items[index].effects.append(life)
    }
  }
}

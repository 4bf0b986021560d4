import JSON

/// A store's recent past, bounded: the last `limit` entries or a few more (up to
/// `limit + interval - 1`), where each entry and effect is reported, the published view after
/// every `interval`-th entry (64, or `limit` when smaller), and the checkpoint: the oldest view
/// kept, whose private state the store keeps, typed, in `Store.historyBase`.
///
/// `state/get` at a past version is the nearest view at or before it with the patches of the
/// entries after it applied (`view(at:)`): at most `interval - 1` entries of patches, whatever
/// the state's size or `limit`. A kept view is the store's published JSON value itself, which
/// shares every unchanged part with the live one: keeping it costs one retain, and the next
/// publication copies the containers it edits (once per interval). `store/rewind` needs the
/// private state, which no view holds: the checkpoint's, with the actions after it reduced
/// again at their recorded times.
///
/// Entries leave a whole interval at a time, with the view before them, once the entries after
/// the next view number `limit`; the store then reduces their actions onto its checkpoint, in
/// place, in one loop (`Store.advanceBase`). (The log used to hold exactly `limit` entries,
/// reduce each one that fell off onto the checkpoint at once, and keep the patches bridging the
/// oldest view to it: a fifth of a pipelined counter increment, mostly the per-call costs of
/// the store's unspecialized generic code. A typed snapshot of the private state with each view,
/// which would need no reduce at all, was measured too: at 100,000 notes every one made the next
/// edit copy the notes array, 1.5x the instructions of an edit without history, and kept its
/// own copy, 130 MB more in all.)
///
/// Not generic, on purpose: the store's code runs unspecialized behind `AnyStore`, where every
/// generic type it touches costs a metadata lookup per use; the per-action path here touches
/// none. The store's actions are kept as `any Sendable` and cast back only when read.
@StateActor
final class HistoryLog {
  struct Item {
    var seq: UInt64
    var kind: HistoryEntry.Kind
    var version: UInt64
    /// The action, as the feature's `Action` (cast back by the store); for a rewind, the
    /// state it restored, as the feature's `State`; `()` for events. (Not optional: binding an
    /// optional existential copied it once more per action.)
    var payload: any Sendable
    var origin: HistoryEntry.Origin
    var patch: [JSON]
    var events: [JSON]
    var at: Int64
    var duration: Duration
    var effects: [EffectLife] = []
    /// Turned off by `history/skip`: reduced by nothing that recomputes a state.
    var skipped = false
  }

  /// The published view after entry `seq` (0: the store's view when history started), at
  /// `version`: where `state/get` at a past version starts patching forward.
  struct Snapshot {
    var seq: UInt64
    var version: UInt64
    var view: JSON
  }

  /// Entries between two kept views at most (the Elm debugger's interval).
  static let snapshotInterval: UInt64 = 64

  /// Entries kept per store at least, once that many were made; 0 keeps none (only `sink`
  /// hears them).
  let limit: Int
  /// Entries between two kept views: `snapshotInterval`, or `limit` when smaller, so that a
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
  let sink: (@StateActor (HistoryRecord) -> Void)?
  /// A view every `interval` entries, oldest first; the first is the checkpoint's: at most
  /// `limit / interval + 2`.
  private(set) var snapshots: [Snapshot] = []

  /// A log whose checkpoint is the store now, at `version`, published as `view`.
  init(limit: Int, version: UInt64, view: JSON, sink: (@StateActor (HistoryRecord) -> Void)?) {
    self.limit = max(0, limit)
    self.interval = max(1, min(Self.snapshotInterval, UInt64(self.limit)))
    self.baseVersion = version
    self.sink = sink
    if self.limit > 0 {
      snapshots = [Snapshot(seq: 0, version: version, view: view)]
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

  /// Keeps an entry, and every `interval` entries the store's view after it (`view` is read
  /// only then). Returns how many of the oldest entries are to leave (0 but once an interval):
  /// the store reduces them onto its checkpoint (`takeLeaving(_:)`), then calls `dropLeaving()`.
  func append(_ item: consuming Item, view: () -> JSON) -> Int {
    making = nil
    guard keepsEntries else { return 0 }
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
      snapshots.append(Snapshot(seq: seq, version: version, view: view()))
    }
    // The second view becomes the checkpoint's when the entries after it number `limit`.
    guard snapshots.count > 1, seq - snapshots[1].seq >= UInt64(limit) else { return 0 }
    return Int(snapshots[1].seq - baseSeq)
  }

  /// What the store reduces onto its checkpoint of the `offset`-th oldest entry, which is
  /// leaving: its kind, action (or state restored), moved out rather than copied, and time
  /// stamp.
  func takeLeaving(_ offset: Int) -> (
    kind: HistoryEntry.Kind, payload: any Sendable, at: Int64, skipped: Bool
  ) {
    let index = head + offset < items.count ? head + offset : head + offset - items.count
    var payload: any Sendable = ()
    swap(&payload, &items[index].payload)
    return (items[index].kind, payload, items[index].at, items[index].skipped)
  }

  /// Lets the oldest interval of entries go, with the view before them: the next view is now
  /// the checkpoint's. (Their places in the ring are taken by the next entries.)
  func dropLeaving() {
    guard snapshots.count > 1 else { return }
    let dropped = Int(snapshots[1].seq - baseSeq)
    snapshots.removeFirst()
    baseSeq = snapshots[0].seq
    baseVersion = snapshots[0].version
    head = (head + dropped) % (limit + Int(interval))
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

  /// The entries to reduce again, after the checkpoint, to reach the last state at `version`
  /// (which must be between `firstVersion` and the current version): those up to the last
  /// one whose version is at most `version`.
  func path(to version: UInt64) -> [Item] {
    let end = firstSeq(after: version)
    return (0..<Int(end - baseSeq - 1)).map { self[$0] }
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

  /// Turns entry `seq` off or on again (`history/skip`); false if it is no longer held.
  func setSkipped(_ seq: UInt64, _ skipped: Bool) -> Bool {
    guard let offset = offset(of: seq) else { return false }
    let index = head + offset < items.count ? head + offset : head + offset - items.count
    items[index].skipped = skipped
    return true
  }

  /// Every entry held, oldest first.
  var held: [Item] { (0..<count).map { self[$0] } }

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

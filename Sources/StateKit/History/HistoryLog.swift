import JSON

/// A store's recent past, bounded: the last `limit` entries, where each entry and effect is
/// reported, the version of the checkpoint (the state before the oldest entry held, which the
/// store keeps, typed, in `Store.historyBase`), and the published view every 64 versions.
///
/// `state/get` at a past version is the nearest view snapshot at or before it with the
/// entries' patches after it applied (`view(at:)`): at most 63 versions of patches, whatever
/// the state's size or `limit`. A snapshot is the store's published JSON value itself, which
/// shares every unchanged part with the live one: keeping it costs one retain, and the next
/// publication copies the containers it edits (once per 64 versions). Measured at 100,000
/// notes (`bench/history`, callgrind): an edit costs 1.25x the instructions of one without
/// history (1.03x with the checkpoint alone), and `state/get` at a past version takes 2 to
/// 6 ms where reducing up to 1,000 actions again from the checkpoint took 0.2 to 1 s.
/// (A typed snapshot of the state every 64 versions was measured first, at 3 to 6x per edit:
/// it made the reducer's next in-place edit copy the state's containers.)
///
/// The oldest snapshot is kept until the next one is at or before the checkpoint, with the
/// patches of the entries that fell off the log since it (`bridge`, fewer than 64), so every
/// version held has a snapshot to start from. The checkpoint stays for what a view cannot
/// give: `store/rewind` needs the private state, so the actions after the checkpoint are
/// reduced again at their recorded times. When an entry falls off the log, the store reduces
/// it onto the checkpoint, which it alone holds, so the checkpoint is edited in place as the
/// live state is.
///
/// Not generic, on purpose: the store's code runs unspecialized behind `AnyStore`, where every
/// generic type it touches costs a metadata lookup per use; the per-action path here touches
/// none (it was about a third of history's cost).
@MainActor
final class HistoryLog {
  struct Item {
    var seq: UInt64
    var kind: HistoryEntry.Kind
    var version: UInt64
    /// The action, as the feature's `Action` (cast back by the store).
    var action: (any Sendable)?
    /// For a rewind: the state it restored, as the feature's `State`.
    var restored: (any Sendable)?
    var origin: HistoryEntry.Origin
    var patch: [JSON]
    var events: [JSON]
    var at: Int64
    var duration: Duration
    var effects: [EffectLife] = []
  }

  /// The published view after entry `seq` (0: the store's view when history started), at
  /// `version`: where `state/get` at a past version starts patching forward.
  struct Snapshot {
    var seq: UInt64
    var version: UInt64
    var view: JSON
  }

  /// Versions between two snapshots (the Elm debugger's interval).
  static let snapshotInterval: UInt64 = 64

  /// Entries kept per store; 0 keeps none (only `sink` hears them).
  let limit: Int
  /// The entries held, a ring once full: the oldest is at `head`, and a new entry takes the
  /// place of the one it pushes out.
  private var items: [Item] = []
  private var head = 0
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
  /// Views kept every `snapshotInterval` versions, oldest first: the oldest at or before the
  /// checkpoint, every other one after it (the oldest is dropped once the next one is at or
  /// before the checkpoint): at most `limit / snapshotInterval + 2`. They share every
  /// unchanged part with the live view and with each other, so each costs what changed since,
  /// plus one copy of the containers the next publication edits (made then, once per
  /// interval).
  private(set) var snapshots: [Snapshot] = []
  /// The patches of the entries that fell off the log after the oldest snapshot, so that it
  /// still reaches the checkpoint (empty ones left out): fewer than `snapshotInterval`, as
  /// each raised the version and the next snapshot is not yet at or before the checkpoint.
  private(set) var bridge: [(seq: UInt64, version: UInt64, patch: [JSON])] = []
  /// The version of the last snapshot taken, kept even once it is dropped.
  private var snapshotVersion: UInt64

  /// A log whose checkpoint is the store's state now, at `version`, published as `view`.
  init(limit: Int, version: UInt64, view: JSON, sink: (@MainActor (HistoryRecord) -> Void)?) {
    self.limit = max(0, limit)
    self.baseVersion = version
    self.snapshotVersion = version
    self.sink = sink
    if self.limit > 0 { snapshots = [Snapshot(seq: 0, version: version, view: view)] }
  }

  var keepsEntries: Bool { limit > 0 }
  /// The oldest version whose state can be produced.
  var firstVersion: UInt64 { baseVersion }
  var count: Int { items.count }

  func takeSeq() -> UInt64 {
    let seq = nextSeq
    nextSeq += 1
    making = seq
    return seq
  }

  /// Keeps an entry; returns the oldest one when it falls off the log, for the store to
  /// reduce onto its checkpoint.
  func append(_ item: Item) -> Item? {
    making = nil
    guard keepsEntries else { return nil }
    guard items.count == limit else {
      items.append(item)
      return nil
    }
    var dropped = item
    swap(&dropped, &items[head])
    head = head + 1 == limit ? 0 : head + 1
    baseSeq = dropped.seq
    baseVersion = dropped.version
    if snapshots.count > 1, snapshots[1].seq <= baseSeq {
      snapshots.removeFirst()
      let oldest = snapshots[0].seq
      bridge.removeAll { $0.seq <= oldest }
    }
    if let oldest = snapshots.first, oldest.seq < dropped.seq, !dropped.patch.isEmpty {
      bridge.append((dropped.seq, dropped.version, dropped.patch))
    }
    return dropped
  }

  /// Keeps `view`, published after entry `seq` at `version`, when `snapshotInterval` versions
  /// have passed since the last snapshot. `view` is read only then: one comparison per entry.
  func snapshot(after seq: UInt64, version: UInt64, view: () -> JSON) {
    guard keepsEntries, version >= snapshotVersion + Self.snapshotInterval else { return }
    snapshotVersion = version
    snapshots.append(Snapshot(seq: seq, version: version, view: view()))
  }

  /// The published view at `version` (between `firstVersion` and the current one): the
  /// nearest snapshot at or before it, with the patches after it applied up to `version`
  /// (the bridge's, then the log's). Nil when no snapshot is kept (`limit` 0) or a patch does
  /// not apply.
  func view(at version: UInt64) -> JSON? {
    guard let index = snapshots.lastIndex(where: { $0.version <= version }) else { return nil }
    let snapshot = snapshots[index]
    var view = snapshot.view
    do {
      for bridged in bridge where bridged.seq > snapshot.seq {
        guard bridged.version <= version else { return view }
        try JSONPatch(json: .array(bridged.patch)).apply(to: &view)
      }
      var offset = snapshot.seq > baseSeq ? Int(snapshot.seq - baseSeq) : 0
      while offset < items.count {
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

  /// The entry `offset` places after the oldest held.
  private subscript(offset: Int) -> Item {
    let index = head + offset
    return items[index < items.count ? index : index - items.count]
  }

  /// The offset from the oldest held of entry `seq`, if still held.
  private func offset(of seq: UInt64) -> Int? {
    guard seq > baseSeq, seq < nextSeq else { return nil }
    let offset = Int(seq - baseSeq - 1)
    return offset < items.count ? offset : nil
  }

  /// The seq of the first entry with a version above `version` (`nextSeq` if none); versions
  /// never fall along the log.
  func firstSeq(after version: UInt64) -> UInt64 {
    var low = 0
    var high = items.count
    while low < high {
      let middle = (low + high) / 2
      if self[middle].version <= version { low = middle + 1 } else { high = middle }
    }
    return baseSeq + UInt64(low) + 1
  }

  /// Entries from seq `start` on, at most `limit` of them, oldest first.
  func items(from start: UInt64, limit: Int) -> [Item] {
    guard let first = offset(of: max(start, baseSeq + 1)) else { return [] }
    return (first..<min(items.count, first + limit)).map { self[$0] }
  }

  /// The entry `seq`, if still held.
  func item(_ seq: UInt64) -> Item? {
    offset(of: seq).map { self[$0] }
  }

  /// The entries to reduce again, after the checkpoint, to reach the last state at `version`
  /// (which must be between `firstVersion` and the current version): those up to the last
  /// one whose version is at most `version`.
  func path(to version: UInt64) -> [Item] {
    let end = firstSeq(after: version)
    return (0..<Int(end - baseSeq - 1)).map { self[$0] }
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

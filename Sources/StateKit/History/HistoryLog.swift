import JSON

/// A store's recent past, bounded: the last `limit` entries or a few more (up to
/// `limit + interval - 1`), where each entry and effect is reported, and the checkpoint: the
/// state before the oldest entry held, which the store keeps, typed, in `Store.historyBase`.
///
/// `state/get` at a past version is the store's published view now with the entries after
/// that version taken back, newest first (`view(at:)`): each entry keeps its view patch's
/// reversal (`JSONPatchReversal`, the values the patch replaced or removed, by reference). No
/// copy of a past view is kept: a kept view shares its containers with the live one, so the
/// next in-place edit had to copy the containers it edits, which for an array of 1,000,000
/// notes was a copy of the whole array, once every 64 entries (docs/architecture.md, "History
/// at scale"). An edit now costs the same whatever the view's size, and a past view costs one
/// copy of what its reversals edit, when it is asked for. `store/rewind` needs the private
/// state, which no view holds: the checkpoint's, with the actions after it reduced again at
/// their recorded times.
///
/// Entries leave `interval` at a time, once `limit + interval` are held; the store then
/// reduces their actions onto its checkpoint, in place, in one loop (`Store.advanceBase`).
/// (The log used to hold exactly `limit` entries and reduce each one that fell off onto the
/// checkpoint at once: a fifth of a pipelined counter increment, mostly the per-call costs of
/// the store's unspecialized generic code. A typed snapshot of the private state with each
/// entry, which would need no reduce at all, was measured too: at 100,000 notes every one made
/// the next edit copy the notes array.)
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
    /// What takes the entry's view patch back (and that of any publication since the entry
    /// before it that made no entry): `view(at:)` walks the view back through it.
    var reversal = JSONPatchReversal()
  }

  /// Entries that leave together (the Elm debugger's snapshot interval, kept as the unit of
  /// eviction: reducing them onto the checkpoint in one loop is cheaper than one at a time).
  static let leavingInterval: UInt64 = 64

  /// Entries kept per store at least, once that many were made; 0 keeps none (only `sink`
  /// hears them).
  let limit: Int
  /// Entries that leave together: `leavingInterval`, or `limit` when smaller, so that a small
  /// log holds fewer than twice its limit.
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

  /// A log whose checkpoint is the store now, at `version`.
  init(limit: Int, version: UInt64, sink: (@StateActor (HistoryRecord) -> Void)?) {
    self.limit = max(0, limit)
    self.interval = max(1, min(Self.leavingInterval, UInt64(self.limit)))
    self.baseVersion = version
    self.sink = sink
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

  /// Keeps an entry. Returns how many of the oldest entries are to leave (0 but once an
  /// interval): the store reduces them onto its checkpoint (`takeLeaving(_:)`), then calls
  /// `dropLeaving(_:)`.
  func append(_ item: consuming Item) -> Int {
    making = nil
    guard keepsEntries else { return 0 }
    let capacity = limit + Int(interval)
    if items.count < capacity {
      items.append(item)
    } else {
      let index = head + count
      items[index < capacity ? index : index - capacity] = item
    }
    count += 1
    return count >= capacity ? Int(interval) : 0
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

  /// Lets the `leaving` oldest entries go: the checkpoint is now the state after the last of
  /// them. (Their places in the ring are taken by the next entries.)
  func dropLeaving(_ leaving: Int) {
    guard leaving > 0, leaving <= count else { return }
    let last = self[leaving - 1]
    baseSeq = last.seq
    baseVersion = last.version
    head = (head + leaving) % (limit + Int(interval))
    count -= leaving
  }

  /// The published view at `version` (between `firstVersion` and the current one), from the
  /// view now, `current`: the entries with a later version taken back, newest first (versions
  /// never fall along the log, so they are the newest ones). Nil when no entry is kept
  /// (`limit` 0), `version` is older than the checkpoint, or a reversal does not apply (a bug).
  func view(at version: UInt64, from current: JSON) -> JSON? {
    guard keepsEntries, version >= baseVersion else { return nil }
    var view = current
    var offset = count - 1
    while offset >= 0 {
      let index = head + offset < items.count ? head + offset : head + offset - items.count
      guard items[index].version > version else { break }
      do {
        try view.reverse(items[index].reversal)
      } catch {
        return nil
      }
      offset -= 1
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

  /// The actions toggled by a `history/skip` made after `version`, each with the flag it had
  /// at `version` (by entry `seq`): a skip toggles its entry, so before it the flag was the
  /// opposite of the one it set. Empty while no skip after `version` is held.
  func skippedFlags(at version: UInt64) -> [UInt64: Bool] {
    var flags: [UInt64: Bool] = [:]
    for offset in stride(from: count - 1, through: 0, by: -1) {
      let item = self[offset]
      guard item.version > version else { break }
      if case .skip(let entry, let skipped) = item.kind { flags[entry] = !skipped }
    }
    return flags
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

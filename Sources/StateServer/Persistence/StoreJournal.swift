import JSON

/// One persistent store's bookkeeping: what awaits the next group commit, and how large its
/// snapshot and journal are on disk, which decides when to compact.
///
/// Compaction is amortized: a store is compacted once its journal outweighs its snapshot
/// (and `minimumCompaction`), so the O(state) work of writing a snapshot is paid once per
/// O(state) bytes of changes, and each change costs O(change) overall. Restoring reads at most
/// about twice the snapshot.
struct StoreJournal {
  /// Below this many journal bytes a store is never compacted (the default): a small store's
  /// snapshot is cheap to rewrite, but not on every change.
  static let minimumCompaction = 256 << 10
  /// Pending operations past which a store keeps a whole snapshot instead (a commit that kept
  /// failing must not hold every change in memory).
  static let maximumPendingOperations = 100_000

  var feature: String
  var schemaVersion: Int
  /// The next commit writes the whole state (a new store, a restored one whose state was
  /// normalized, a store that publishes no state patches) instead of `pending`.
  var needsSnapshot: Bool
  /// Operations since the last commit, in order: one patch from the committed state.
  private(set) var pending: [JSON] = []
  /// The version after `pending`.
  private(set) var pendingVersion: UInt64
  /// Whether anything awaits the next commit.
  var isDirty: Bool { needsSnapshot || !pending.isEmpty || versionOnlyChange || owesWalk }
  /// The store changed and owes its state patch: the commit asks it (`settleOwed`).
  private(set) var owesWalk = false
  private var versionOnlyChange = false
  var snapshotBytes: Int
  var journalBytes: Int
  /// The last journal row written (`nil` before the first).
  var lastSeq: Int64?
  /// Raised by every whole snapshot: a compaction begun before one is stale.
  private(set) var generation = 0
  /// A compaction is being encoded off the state actor.
  var isCompacting = false
  /// Journal bytes below which the store is never compacted.
  var compactionMinimum = Self.minimumCompaction

  init(
    feature: String, schemaVersion: Int, version: UInt64, needsSnapshot: Bool,
    snapshotBytes: Int = 0, journalBytes: Int = 0, lastSeq: Int64? = nil
  ) {
    self.feature = feature
    self.schemaVersion = schemaVersion
    self.pendingVersion = version
    self.needsSnapshot = needsSnapshot
    self.snapshotBytes = snapshotBytes
    self.journalBytes = journalBytes
    self.lastSeq = lastSeq
  }

  /// Adds one publication's state patch; `nil` (a store without state patches) asks for a
  /// whole snapshot.
  mutating func record(_ patch: [JSON]?, version: UInt64) {
    if version != pendingVersion { versionOnlyChange = true }
    pendingVersion = version
    guard !needsSnapshot else { return }
    guard let patch else {
      needsSnapshot = true
      pending = []
      return
    }
    pending += patch
    if pending.count > Self.maximumPendingOperations {
      needsSnapshot = true
      pending = []
    }
  }

  /// A publication whose state patch the store owes (it walks its private state on demand).
  mutating func recordOwed(version: UInt64) {
    if version != pendingVersion { versionOnlyChange = true }
    pendingVersion = version
    if !needsSnapshot { owesWalk = true }
  }

  /// The owed patch, walked at commit time: one walk for every change since the last (nil: the
  /// store asks for a whole snapshot instead, `JournaledStore.takeStatePatch()`).
  mutating func settleOwed(_ patch: [JSON]?) {
    owesWalk = false
    record(patch, version: pendingVersion)
  }

  /// What the next commit writes for this store: a whole snapshot made by `encode`, or one
  /// journal row holding every pending operation. `nil` when nothing is pending.
  func write(store: String, encode: () throws -> String) rethrows -> StoreWrite? {
    guard isDirty else { return nil }
    if needsSnapshot {
      let snapshot = Snapshot(
        store: store, feature: feature, schemaVersion: schemaVersion, version: pendingVersion,
        state: try encode())
      return StoreWrite(store: store, snapshot: snapshot, journal: [])
    }
    let patch = JSON.array(pending)
    let text = (try? patch.serialized()).map { String(decoding: $0, as: UTF8.self) } ?? "[]"
    return StoreWrite(store: store, journal: [(pendingVersion, text)])
  }

  /// `write` was committed (`lastSeq`: the row it added, if any).
  mutating func committed(_ write: StoreWrite, lastSeq: Int64?) {
    if let snapshot = write.snapshot {
      snapshotBytes = snapshot.state.utf8.count
      journalBytes = 0
      generation += 1
    }
    for entry in write.journal { journalBytes += entry.patch.utf8.count }
    if let lastSeq { self.lastSeq = lastSeq }
    needsSnapshot = false
    versionOnlyChange = false
    owesWalk = false
    pending = []
  }

  /// A compaction encoded while the journal stood at `coveredSeq` was committed.
  mutating func compacted(snapshotBytes: Int, journalBytesCovered: Int) {
    self.snapshotBytes = snapshotBytes
    journalBytes = max(0, journalBytes - journalBytesCovered)
    isCompacting = false
  }

  /// Time to rewrite the snapshot: the journal outweighs it.
  var shouldCompact: Bool {
    !isCompacting && !isDirty && journalBytes > max(compactionMinimum, snapshotBytes)
  }
}

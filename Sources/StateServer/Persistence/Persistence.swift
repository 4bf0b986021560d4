import FoundationEssentials
import JSON
import StateKit

/// Keeps persistent stores on disk, durably: a change is acknowledged only once committed.
///
/// Each store has a snapshot row and a journal of the changes since (the private state's
/// patches, O(change) each); restore is the snapshot with the journal applied. The server
/// records every publication of a persistent store (`record`) and calls `commit` before it
/// hands the lines that report those changes to the writer, so every change reduced in one
/// turn of the state actor shares one transaction (group commit) and no response goes out
/// before the change it reports is on disk. A change made by an effect alone is committed by
/// the same path, or by a commit scheduled for the next turn when nothing else is written.
///
/// SQLite runs in WAL mode with `synchronous = NORMAL`: a committed transaction survives the
/// process being killed; a power loss or OS crash can lose the last transactions committed
/// before it (never a half-written one). A clean exit (`flush`) checkpoints the WAL into the
/// main file and closes the database.
///
/// ```swift
/// let persistence = Persistence(stateDirectory: Persistence.defaultDirectory())
/// let saved = persistence.restore(storeID: "notes", feature: "notes", schemaVersion: 1)
/// let store = try descriptor.makeStore("notes", nil, saved)
/// persistence.attach(store)
/// ```
@StateActor
public final class Persistence {
  let database: SnapshotDatabase
  let warn: @Sendable (String) -> Void
  /// Where the server's life is told (`--log-level info`): how long the final flush took.
  private let inform: @Sendable (String) -> Void
  var attached: [String: any AnyStore] = [:]
  var journals: [String: StoreJournal] = [:]
  /// Stores that walk their private state on demand (`JournaledStore.publishesStatePatches`
  /// is false): the commit asks them for what they owe.
  private var walksOnDemand: Set<String> = []
  /// Stores with changes awaiting commit, in the order they first changed.
  private var dirty: [String] = []
  /// Each feature's schema version by name, and what each store was restored with.
  private let schemaVersions: [String: Int]
  private var restored: [String: SavedState] = [:]
  private var restoredSchemaVersions: [String: Int] = [:]
  /// Compacted snapshots encoded off the state actor, written by the next commit.
  var compactions: [String: Compaction] = [:]
  /// The last compaction's encoding task (tests await it).
  var lastCompaction: Task<Void, Never>?
  /// The commit scheduled for changes no line reports (an effect's, with nobody subscribed).
  private(set) var scheduledCommit: Task<Void, Never>?
  /// Journal bytes below which no store is compacted.
  private let compactionMinimum: Int
  /// The size of each piece a compacted snapshot is written in: the longest a commit can wait
  /// for a compaction is the write of one piece.
  var compactionPieceBytes = 256 << 10
  private var isClosed = false

  /// How many write transactions have been committed: group commit is visible here.
  public private(set) var transactionCount = 0

  /// The database file, or `nil` when state is kept in memory (`--ephemeral`, or a state
  /// directory that could not be used).
  public var databasePath: String? { database.path }

  /// Opens (creating if needed) the database in `stateDirectory`; `nil` keeps everything in
  /// memory for this run. Never fails: an unreadable database is set aside with a warning; a
  /// read-only one is read and nothing is written to it, which is said once, here.
  /// `schemaVersions` gives each feature's schema version by feature name; a store is compacted
  /// once its journal passes both its snapshot's size and `compactionMinimum` bytes.
  public init(
    stateDirectory: String?, schemaVersions: [String: Int] = [:],
    compactionMinimum: Int = 256 << 10,
    warn: @escaping @Sendable (String) -> Void = Persistence.writeToStandardError,
    inform: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    database = SnapshotDatabase(directory: stateDirectory, warn: warn)
    self.compactionMinimum = compactionMinimum
    self.inform = inform
    self.schemaVersions = schemaVersions
    self.warn = warn
    if database.isReadOnly {
      warn(
        "the state database \(database.path ?? "") is read-only: stores are restored from it, "
          + "but changes made in this run are kept in memory only and are not saved")
    }
  }

  /// `$XDG_STATE_HOME/APPLICATION`, else `~/.local/state/APPLICATION` (XDG Base Directory):
  /// each application's stores apart from another's.
  public nonisolated static func defaultDirectory(
    application: String = "stateserver",
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String {
    if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
      return FilePath.join(state, application)
    }
    let home =
      environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
      ?? FileManager.default.homeDirectoryForCurrentUser.path
    return FilePath.join(home, ".local/state/" + application)
  }

  /// The default warning sink: a warning record of a default ``Log``.
  public nonisolated static func writeToStandardError(_ message: String) {
    Log().warning(message)
  }

  // MARK: Start-up

  /// The saved state and version of `storeID`, or `nil` if there is none or it cannot be used.
  /// Data of another feature, another schema version, or that fails a check (a version out of
  /// range, a patch that does not apply) is set aside (tables `set_aside` and
  /// `journal_set_aside`) with a warning naming what was wrong.
  public func restore(storeID: String, feature: String, schemaVersion: Int)
    -> (state: JSON, version: UInt64)?
  {
    restored[storeID] = nil
    restoredSchemaVersions[storeID] = schemaVersion
    let rows: SavedRows?
    do {
      rows = try database.load(store: storeID)
    } catch {
      warn("cannot read the saved state of store \(storeID) (\(error)); starting fresh")
      return nil
    }
    guard let rows else { return nil }
    let saved: SavedState
    do {
      saved = try SavedState(rows)
    } catch {
      setAside(storeID: storeID, reason: error.reason)
      return nil
    }
    guard saved.feature == feature else {
      setAside(storeID: storeID, reason: "saved by feature \(saved.feature), not \(feature)")
      return nil
    }
    guard saved.schemaVersion == schemaVersion else {
      setAside(
        storeID: storeID,
        reason: "schema version \(saved.schemaVersion), expected \(schemaVersion)")
      return nil
    }
    restored[storeID] = saved
    return (saved.state, saved.version)
  }

  /// The feature whose data `storeID` holds on disk, if any: a store id is bound to one
  /// feature, so that opening it as another cannot push its data aside.
  public func savedFeature(of storeID: String) -> String? {
    guard let value = try? database.savedFeature(store: storeID) else { return nil }
    return value.text ?? value.description
  }

  /// Moves the saved state of `storeID` aside so the store starts fresh; call it when the
  /// feature cannot decode a restored snapshot. The old state stays in the database.
  public func setAside(storeID: String, reason: String) {
    restored[storeID] = nil
    warn(
      "the saved state of store \(storeID) cannot be used (\(reason)); "
        + "set it aside in \(databasePath ?? "memory") (tables set_aside, journal_set_aside) "
        + "and starting fresh")
    do {
      try database.setAside(store: storeID, reason: reason)
    } catch {
      warn("could not set aside the state of store \(storeID): \(error)")
    }
  }

  // MARK: Changes

  /// Starts persisting `store`, tagged with `schemaVersion`. A store restored at its saved
  /// version continues its journal; any other first writes a whole snapshot at the next commit.
  public func attach(_ store: any AnyStore, schemaVersion: Int) {
    let saved = restored.removeValue(forKey: store.id)
    let continues = saved.map { $0.version == store.version } ?? false
    let journaled = store as? any JournaledStore
    journaled?.journalState()
    if journaled?.publishesStatePatches == false {
      walksOnDemand.insert(store.id)
    } else {
      walksOnDemand.remove(store.id)
    }
    attached[store.id] = store
    journals[store.id] = StoreJournal(
      feature: store.featureName, schemaVersion: schemaVersion, version: store.version,
      needsSnapshot: !continues, snapshotBytes: saved?.snapshotBytes ?? 0,
      journalBytes: saved?.journalBytes ?? 0, lastSeq: saved?.lastSeq)
    journals[store.id]?.compactionMinimum = compactionMinimum
    compactions[store.id] = nil
    if !continues { markDirty(store.id) }
  }

  /// Starts persisting `store` with its feature's schema version (from `schemaVersions`,
  /// else the one it was `restore`d with, else 1).
  public func attach(_ store: any AnyStore) {
    let version =
      schemaVersions[store.featureName] ?? restoredSchemaVersions[store.id] ?? 1
    attach(store, schemaVersion: version)
  }

  /// A persistent store published: its state patch joins the next commit.
  public func record(_ publication: Publication) {
    let id = publication.store
    guard journals[id] != nil else { return }
    if publication.statePatch == nil, walksOnDemand.contains(id) {
      journals[id]?.recordOwed(version: publication.to)
    } else {
      journals[id]?.record(publication.statePatch, version: publication.to)
    }
    markDirty(id)
  }

  /// Records that `storeID` changed without a patch: the next commit writes its whole state.
  public func changed(storeID: String) {
    guard let store = attached[storeID] else { return }
    journals[storeID]?.record(nil, version: store.version)
    markDirty(storeID)
  }

  private func markDirty(_ id: String) {
    if !dirty.contains(id) { dirty.append(id) }
    scheduleCommit()
  }

  func scheduleCommit() {
    guard scheduledCommit == nil else { return }
    // Lines that report a change commit it before they leave (`commit`); this task commits
    // what no line reports, at the latest one turn of the state actor later.
    scheduledCommit = Task { @StateActor [weak self] in
      guard let self else { return }
      self.scheduledCommit = nil
      do throws(CommitFailure) {
        try self.commit()
      } catch {
        self.warn("\(error.reason); these changes are in memory only")
      }
    }
  }

  /// Whether a commit has anything to write.
  public var hasPendingChanges: Bool { !dirty.isEmpty || !compactions.isEmpty }

  /// Commits every pending change in one transaction; when this returns, they survive the
  /// process being killed. On failure nothing pending is dropped (the next commit retries)
  /// and the error names the stores whose changes are not on disk.
  public func commit() throws(CommitFailure) {
    guard hasPendingChanges, !isClosed else { return }
    if database.isReadOnly {
      // Said at start-up: this run keeps changes in memory.
      dirty.removeAll()
      compactions.removeAll()
      return
    }
    // Stores that owe their state patch walk once now, for every change since the last
    // commit (a whole snapshot needs the walk too: it encodes the JSON the walk updates).
    for id in dirty where walksOnDemand.contains(id) {
      guard let store = attached[id] as? any JournaledStore else { continue }
      let patch = store.takeStatePatch()
      journals[id]?.settleOwed(patch)
    }
    var group: [StoreWrite] = []
    var failed: [String] = []
    for id in dirty {
      guard let store = attached[id], let journal = journals[id] else { continue }
      do {
        if let write = try journal.write(store: id, encode: { try Self.encode(store) }) {
          group.append(write)
        }
      } catch {
        failed.append(id)
        warn("cannot encode the state of store \(id) (\(error)); not saved")
      }
    }
    let compacted = readyCompactions()
    group += compacted.map(\.write)
    let lastSeqs: [String: Int64]
    do {
      lastSeqs = try database.write(group)
    } catch {
      for compaction in compacted { journals[compaction.store]?.isCompacting = false }
      throw CommitFailure(stores: dirty, reason: "could not save the changes of \(dirty): \(error)")
    }
    transactionCount += 1
    for compaction in compacted {
      journals[compaction.store]?.compacted(
        snapshotBytes: compaction.snapshotBytes, journalBytesCovered: compaction.journalBytes)
    }
    for write in group where write.snapshot == nil || write.journalCovered == nil {
      journals[write.store]?.committed(write, lastSeq: lastSeqs[write.store])
    }
    dirty = failed
    guard failed.isEmpty else {
      throw CommitFailure(stores: failed, reason: "could not encode the state of \(failed)")
    }
    startCompactions()
  }

  /// A whole store's private state as snapshot text.
  private static func encode(_ store: any AnyStore) throws -> String {
    let state = (store as? any JournaledStore)?.journaledState ?? store.snapshot
    return String(decoding: try state.serialized(), as: UTF8.self)
  }

  /// Commits the store's last changes, then stops persisting it (`store/close`).
  public func detach(storeID: String) throws(CommitFailure) {
    defer {
      attached[storeID] = nil
      journals[storeID] = nil
      walksOnDemand.remove(storeID)
      compactions[storeID] = nil
      dirty.removeAll { $0 == storeID }
    }
    if journals[storeID]?.isDirty == true { try commit() }
  }

  /// Shutdown, after the drain: commits what is pending, checkpoints the WAL into the main
  /// file and closes the database, so a clean exit leaves nothing in the `-wal` file.
  public func flush() {
    let started = ContinuousClock.now
    defer {
      let elapsed = (ContinuousClock.now - started) / .milliseconds(1)
      inform(
        "state database committed, checkpointed and closed in \(elapsed) ms "
          + "(\(self.transactionCount) transactions in this run)")
    }
    scheduledCommit?.cancel()
    scheduledCommit = nil
    do throws(CommitFailure) {
      try commit()
    } catch {
      warn("\(error.reason); these changes are lost")
    }
    isClosed = true
    do {
      try database.checkpointAndClose()
    } catch {
      warn("could not checkpoint the state database (\(error)); the WAL file still holds data")
    }
  }
}

/// A commit that failed: the stores whose changes are not on disk, and why.
public struct CommitFailure: Error, Equatable {
  public var stores: [String]
  public var reason: String
}

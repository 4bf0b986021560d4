import FoundationEssentials
import JSON
import StateKit

/// A persistent store's changes: recorded as they are published, committed as one group.
extension Persistence {
  /// Starts persisting `store`, tagged with `schemaVersion`. A store restored at its saved
  /// version continues its journal; any other first writes a whole snapshot at the next commit.
  public func attach(_ store: any AnyStore, schemaVersion: Int) {
    var saved = restored.removeValue(forKey: store.id)
    let continues = saved.map { $0.version == store.version } ?? false
    let journaled = store as? any JournaledStore
    // A store that resumed at its saved version holds the state saved (its decoding changed
    // nothing): the saved JSON is its state's encoding, and the journal starts from it instead
    // of encoding the whole state again (unless `restore` let it go: `null`).
    let encoded = continues && saved?.state != .null ? saved?.state : nil
    saved?.state = .null
    journaled?.journalState(startingFrom: consume encoded)
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

  func markDirty(_ id: String) {
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
    guard let journaled = store as? any JournaledStore else {
      return String(decoding: try store.snapshot.serialized(), as: UTF8.self)
    }
    // Written as text, a large array's elements a batch at a time: no JSON tree of the state.
    // The writer hands each megabyte on to the text, so that the text is the one copy of the
    // state's JSON (the writer's whole buffer, then a `String` made from it, were two).
    let piece = 1 << 20
    var text = ""
    var writer = JSONWriter(capacity: 1 << 16)
    try writer.write(handingOnAt: piece, to: { text += String(decoding: $0, as: UTF8.self) }) {
      try journaled.writeJournaledState(to: &$0)
    }
    writer.withUnsafeBytes { text += String(decoding: $0, as: UTF8.self) }
    return text
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

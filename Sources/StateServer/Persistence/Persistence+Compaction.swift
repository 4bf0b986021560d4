import JSON
import StateKit

/// A snapshot encoded off the state actor, waiting for the next commit to write it.
struct Compaction {
  var store: String
  /// The store's `StoreJournal.generation` when it began: a whole snapshot written since
  /// makes it stale.
  var generation: Int
  var write: StoreWrite
  var snapshotBytes: Int
  /// Journal bytes the snapshot replaces.
  var journalBytes: Int
}

/// Compaction: once a store's journal outweighs its snapshot, its state is encoded on a
/// background task from the JSON the store already keeps (taking it is O(1): `JSON` is a
/// value, copy-on-write), and written by the database's `BackgroundWriter` in pieces, each a
/// short transaction, switched in by one small transaction; the journal rows it covers are
/// deleted afterwards, a batch at a time (`SnapshotPieces`). Neither the encoding nor the
/// write runs on the state actor, and a commit that falls into the write waits for one piece
/// at most. (An in-memory database has no second connection: the next group commit writes it
/// whole.) The
/// store's next change copies the parts of its JSON it edits (the path to the change, an
/// array of references) once, because the task shares them. A store that keeps a large
/// array's elements in its typed state only (`ArrayElision`) has no JSON of them to share: the
/// task writes its text from the state, which it shares as it shares the JSON.
extension Persistence {
  /// Begins compacting every store whose journal passed the bound (called after a commit,
  /// when the journal is exactly what is on disk).
  func startCompactions() {
    for (id, journal) in journals where journal.shouldCompact {
      guard let store = attached[id] as? any JournaledStore, let covered = journal.lastSeq
      else { continue }
      journals[id]?.isCompacting = true
      // A store that keeps a large array's elements in its typed state alone has no JSON of
      // them to share: its text is written by the task, from the state it shares, without a
      // JSON tree of it.
      let writeText = store.journaledStateIsShared ? nil : store.journaledStateText()
      let state = writeText == nil ? store.journaledState : .null
      let snapshot = Snapshot(
        store: id, feature: journal.feature, schemaVersion: journal.schemaVersion,
        version: store.version, state: "")
      let generation = journal.generation
      let journalBytes = journal.journalBytes
      let background = database.background
      let pieceBytes = compactionPieceBytes
      lastCompaction = Task.detached(priority: .utility) { [weak self] in
        guard let bytes = writeText.map(Self.text(writtenBy:)) ?? (try? state.serialized()) else {
          await self?.compactionEnded(id, generation: generation, written: nil)
          return
        }
        let compaction = Compaction(
          store: id, generation: generation,
          write: StoreWrite(store: id, snapshot: snapshot, journalCovered: covered, journal: []),
          snapshotBytes: bytes.count, journalBytes: journalBytes)
        guard let background else {
          var inline = compaction
          inline.write.snapshot?.state = String(decoding: bytes, as: UTF8.self)
          await self?.encoded(inline)
          return
        }
        let result = await withCheckedContinuation { written in
          background.write(
            snapshot, state: bytes, covered: covered, pieceBytes: pieceBytes
          ) { written.resume(returning: $0) }
        }
        switch result {
        case .success(let written):
          await self?.compactionEnded(
            id, generation: generation, written: written ? compaction : nil)
        case .failure(let error):
          self?.warn("could not compact the state of store \(id) (\(error)); its journal grows")
          await self?.compactionEnded(id, generation: generation, written: nil)
        }
      }
    }
  }

  /// The text `write` writes; nil when it does not encode.
  nonisolated private static func text(
    writtenBy write: @Sendable (inout JSONWriter) throws -> Void
  ) -> [UInt8]? {
    var writer = JSONWriter(capacity: 1 << 16)
    do {
      try write(&writer)
    } catch {
      return nil
    }
    return writer.withUnsafeBytes { [UInt8]($0) }
  }

  private func compactionEnded(_ id: String, generation: Int, written: Compaction?) {
    guard journals[id]?.generation == generation else { return }
    if let written {
      journals[id]?.compacted(
        snapshotBytes: written.snapshotBytes, journalBytesCovered: written.journalBytes)
    } else {
      journals[id]?.isCompacting = false
    }
  }

  /// Without a background writer: the next group commit writes it.
  private func encoded(_ compaction: Compaction) {
    guard journals[compaction.store]?.generation == compaction.generation else {
      journals[compaction.store]?.isCompacting = false
      return
    }
    compactions[compaction.store] = compaction
    scheduleCommit()
  }

  /// The compactions the commit under way writes; stale ones (the store wrote a whole snapshot
  /// since, or closed) are dropped.
  func readyCompactions() -> [Compaction] {
    let ready = compactions.values.filter { compaction in
      guard let journal = journals[compaction.store] else { return false }
      return journal.generation == compaction.generation && !journal.needsSnapshot
    }
    for compaction in compactions.values
    where !ready.contains(where: { $0.store == compaction.store }) {
      journals[compaction.store]?.isCompacting = false
    }
    compactions.removeAll()
    return ready
  }
}

import JSON
import StateKit

/// A snapshot encoded off the main actor, waiting for the next commit to write it.
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
/// value, copy-on-write), and the next group commit replaces the snapshot and deletes the
/// journal rows it covers, in one transaction. The main actor pays for the write of the
/// encoded text, not for the encoding, which is most of the cost; the store's next change
/// copies the parts of its JSON it edits (the path to the change, an array of references)
/// once, because the task shares them.
extension Persistence {
  /// Begins compacting every store whose journal passed the bound (called after a commit,
  /// when the journal is exactly what is on disk).
  func startCompactions() {
    for (id, journal) in journals where journal.shouldCompact {
      guard let store = attached[id] as? any JournaledStore else { continue }
      journals[id]?.isCompacting = true
      let state = store.journaledState
      let snapshot = Snapshot(
        store: id, feature: journal.feature, schemaVersion: journal.schemaVersion,
        version: store.version, state: "")
      let covered = journal.lastSeq
      let generation = journal.generation
      let journalBytes = journal.journalBytes
      lastCompaction = Task.detached(priority: .utility) { [weak self] in
        let text = (try? state.serialized()).map { String(decoding: $0, as: UTF8.self) }
        await self?.encoded(
          text, snapshot: snapshot, covered: covered, generation: generation,
          journalBytes: journalBytes)
      }
    }
  }

  private func encoded(
    _ text: String?, snapshot: Snapshot, covered: Int64?, generation: Int, journalBytes: Int
  ) {
    guard let text, journals[snapshot.store]?.generation == generation else {
      journals[snapshot.store]?.isCompacting = false
      return
    }
    var snapshot = snapshot
    snapshot.state = text
    compactions[snapshot.store] = Compaction(
      store: snapshot.store, generation: generation,
      write: StoreWrite(
        store: snapshot.store, snapshot: snapshot, journalCovered: covered ?? 0, journal: []),
      snapshotBytes: text.utf8.count, journalBytes: journalBytes)
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

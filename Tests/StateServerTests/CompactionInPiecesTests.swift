import Dispatch
import JSON
import StateKit
import Testing

@testable import StateServer

/// Holds a compaction in pieces at each of its steps, on the background writer's queue, until
/// the test lets it go on: what happens between two pieces is then certain, not timed.
final class CompactionGate: Sendable {
  let steps: AsyncStream<SnapshotPieces.Step>
  private let continuation: AsyncStream<SnapshotPieces.Step>.Continuation
  private let proceed = DispatchSemaphore(value: 0)

  init() {
    (steps, continuation) = AsyncStream.makeStream()
  }

  /// The hook: reports the step, then waits to be let go (30 s at most, so that a failing
  /// test cannot hang the writer forever).
  func hold(_ step: SnapshotPieces.Step) {
    continuation.yield(step)
    if step == .finished {
      continuation.finish()
    } else {
      _ = proceed.wait(timeout: .now() + 30)
    }
  }

  func letGo() { proceed.signal() }
}

@StateActor
@Suite struct CompactionInPiecesTests {
  /// A compaction held between its pieces holds no lock: a commit goes through at once (were
  /// the write lock held, it would wait out the 10 s busy timeout and fail). And at every step
  /// (each piece, the switch, each clean-up batch) what a restart would restore, as if the
  /// process were killed there, is exactly the live state.
  @Test(.timeLimit(.minutes(1))) func commitsProceedAndACrashAtAnyStepLosesNothing() async throws {
    let fixture = JournalFixture(compactionMinimum: 1)
    defer { remove(fixture.directory) }
    fixture.persistence.compactionPieceBytes = 100
    try fixture.persistence.commit()
    for n in 0..<40 { fixture.store.send(.add(id: "i\(n)", title: "item \(n)")) }
    let gate = CompactionGate()
    let background = try #require(fixture.persistence.database.background)
    background.setStep { gate.hold($0) }
    try fixture.persistence.commit()  // the journal outweighs the snapshot: compaction starts
    let compaction = try #require(fixture.persistence.lastCompaction)
    var pieces = 0
    var switched = false
    var cleaned = 0
    for await step in gate.steps {
      switch step {
      case .piece(let n):
        #expect(n == pieces && !switched)
        pieces += 1
        fixture.store.send(.rename(id: "i\(n)", title: "during piece \(n)"))
        try fixture.persistence.commit()
      case .switched:
        switched = true
      case .cleaned:
        cleaned += 1
      case .finished:
        break
      }
      let restored = try #require(fixture.restored())
      #expect(restored.state == (try fixture.live()), "after \(step)")
      #expect(restored.version == fixture.store.version, "after \(step)")
      gate.letGo()
    }
    background.setStep(nil)
    await compaction.value
    #expect(pieces > 10)
    #expect(switched)
    #expect(cleaned > 0)
    let database = fixture.database()
    // One row per commit made during the pieces is left; the covered rows and no piece more
    // than the snapshot's are.
    #expect(try database.journalCount(store: "shelf") == pieces)
    #expect(try database.pieceCount(store: "shelf") == pieces)
    let restored = try #require(fixture.restored())
    #expect(restored.state == (try fixture.live()))
  }

  /// A snapshot whose pieces are damaged is set aside with a reason naming them, whole where
  /// it can be, never restored half.
  @Test(.timeLimit(.minutes(1))) func aMissingPieceIsSetAsideWithItsReason() async throws {
    let fixture = JournalFixture(compactionMinimum: 1)
    defer { remove(fixture.directory) }
    fixture.persistence.compactionPieceBytes = 100
    try fixture.persistence.commit()
    for n in 0..<20 { fixture.store.send(.add(id: "i\(n)", title: "item \(n)")) }
    try fixture.persistence.commit()
    await fixture.persistence.lastCompaction?.value
    let database = fixture.database()
    #expect(try database.pieceCount(store: "shelf") > 1)
    try database.execute("DELETE FROM snapshot_pieces WHERE piece = 1")
    let warnings = Warnings()
    let persistence = Persistence(stateDirectory: fixture.directory, warn: warnings.record)
    #expect(persistence.restore(storeID: "shelf", feature: "shelf", schemaVersion: 1) == nil)
    #expect(
      warnings.all.contains { $0.contains("piece 1 of snapshot") && $0.contains("set it aside") })
  }

  /// Shutdown stops a compaction before its next piece: the old snapshot stays in use, the
  /// pieces written so far are named by no row, and the next compaction writes over them.
  @Test func aStoppedCompactionLeavesTheOldSnapshotInUse() throws {
    let fixture = JournalFixture()
    defer { remove(fixture.directory) }
    for n in 0..<20 { fixture.store.send(.add(id: "i\(n)", title: "item \(n)")) }
    try fixture.persistence.commit()
    fixture.store.send(.rename(id: "i2", title: "journaled"))
    try fixture.persistence.commit()
    let connection = try SQLiteConnection(path: fixture.directory + "/stateserver.sqlite")
    let covered = try #require(
      try connection.query("SELECT max(seq) FROM journal WHERE store = 'shelf'").first?.first?
        .integer)
    let state = try fixture.live().serialized()
    let snapshot = Snapshot(
      store: "shelf", feature: "shelf", schemaVersion: 1, version: fixture.store.version,
      state: "")
    var asked = 0
    let written = try SnapshotPieces.write(
      snapshot, state: state, covered: covered, pieceBytes: 50, on: connection, at: "now",
      step: { _ in },
      shouldStop: {
        asked += 1; return asked > 2
      })
    #expect(!written)
    let database = fixture.database()
    #expect(try database.pieceCount(store: "shelf") == 2)
    let row = try connection.query("SELECT state FROM snapshots WHERE store = 'shelf'").first
    #expect(row?.first?.text != nil && SnapshotPieces(marker: row?.first?.text) == nil)
    #expect(fixture.restored()?.state == (try fixture.live()))

    let again = try SnapshotPieces.write(
      snapshot, state: state, covered: covered, pieceBytes: 50, on: connection, at: "now",
      step: { _ in })
    #expect(again)
    #expect(try database.pieceCount(store: "shelf") == (state.count + 49) / 50)
    #expect(try database.journalCount(store: "shelf") == 0)
    #expect(fixture.restored()?.state == (try fixture.live()))
  }

  @Test func aMarkerIsReadBackAndNothingElseIsOne() {
    let pieces = SnapshotPieces(snapshot: 42, count: 3, bytes: 700)
    #expect(SnapshotPieces(marker: pieces.marker) == pieces)
    #expect(SnapshotPieces(marker: "{\"items\":[]}") == nil)
    #expect(SnapshotPieces(marker: "pieces 1 2") == nil)
    #expect(SnapshotPieces(marker: "pieces 1 -2 3") == nil)
    #expect(SnapshotPieces(marker: nil) == nil)
  }
}

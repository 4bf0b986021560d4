import Foundation
import JSON
import StateKit
import Testing

@testable import StateServer

/// A feature whose view is not its state (a derived count in, a private counter out), with an
/// `IdentifiedArray`: what the journal must patch in O(change).
struct Shelf: Feature {
  struct Item: Codable, Equatable, Identifiable, Sendable {
    var id: String
    var title: String
  }
  struct State: Codable, Equatable, Sendable {
    var items: IdentifiedArray<Item> = []
    var secret = 0
  }
  struct View: Codable, Equatable, Sendable {
    var items: IdentifiedArray<Item>
    var count: Int
  }
  enum Action: Codable, Equatable, Sendable {
    case add(id: String, title: String)
    case rename(id: String, title: String)
    case bumpSecret
  }
  static let name = "shelf"
  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .add(let id, let title): state.items.append(Item(id: id, title: title))
    case .rename(let id, let title): state.items.modify(id: id) { $0.title = title }
    case .bumpSecret: state.secret += 1
    }
    return .none
  }

  func view(of state: State) -> View { View(items: state.items, count: state.items.count) }
}

/// A persistence and a shelf store wired as the server wires them.
@StateActor
struct JournalFixture {
  let directory = temporaryStateDirectory()
  let persistence: Persistence
  let store: Store<Shelf>
  let warnings = Warnings()

  init(compactionMinimum: Int = 1 << 20) {
    persistence = Persistence(
      stateDirectory: directory, compactionMinimum: compactionMinimum, warn: warnings.record)
    store = Store(feature: Shelf(), id: "shelf")
    store.observer = { [persistence] in persistence.record($0) }
    persistence.attach(store, schemaVersion: 1)
  }

  func database() -> SnapshotDatabase { SnapshotDatabase(directory: directory, warn: { _ in }) }

  /// What a new server would restore.
  func restored() -> (state: JSON, version: UInt64)? {
    Persistence(stateDirectory: directory, warn: { _ in }).restore(
      storeID: "shelf", feature: "shelf", schemaVersion: 1)
  }

  func live() throws -> JSON { try JSONValueEncoder().encode(store.state) }
}

@StateActor
@Suite struct JournalTests {
  @Test func eachCommitAppendsOnePatchAndRestoreAppliesThem() throws {
    let fixture = JournalFixture()
    defer { remove(fixture.directory) }
    try fixture.persistence.commit()  // the new store's first snapshot
    for n in 0..<50 { fixture.store.send(.add(id: "i\(n)", title: "item \(n)")) }
    try fixture.persistence.commit()
    fixture.store.send(.rename(id: "i7", title: "renamed"))
    try fixture.persistence.commit()
    #expect(fixture.persistence.transactionCount == 3)
    let database = fixture.database()
    #expect(try database.journalCount(store: "shelf") == 2)
    // The snapshot is still the empty first one: 51 changes cost two small rows.
    let snapshot = try #require(try database.load(store: "shelf")?.snapshot)
    #expect(snapshot[2] == .integer(0))
    let restored = try #require(fixture.restored())
    #expect(restored.state == (try fixture.live()))
    #expect(restored.version == fixture.store.version)
  }

  /// A store whose view is not its state walks its private state once per commit (and by
  /// itself every 128 actions, within what an `IdentifiedArray` logs), not once per action.
  @Test func aSeparateStateIsWalkedOncePerCommit() throws {
    let fixture = JournalFixture()
    defer { remove(fixture.directory) }
    var carried = 0
    var owed = 0
    fixture.store.observer = { [persistence = fixture.persistence] publication in
      if publication.statePatch == nil { owed += 1 } else { carried += 1 }
      persistence.record(publication)
    }
    #expect(!fixture.store.publishesStatePatches)
    try fixture.persistence.commit()  // the new store's first snapshot
    for n in 0..<1000 { fixture.store.send(.add(id: "i\(n)", title: "item \(n)")) }
    #expect(owed > 900 && carried == 1000 / 129, "walked by itself every 129th action")
    try fixture.persistence.commit()
    #expect(try fixture.database().journalCount(store: "shelf") == 1)
    #expect(fixture.store.takeStatePatch()?.isEmpty == true, "the commit walked")
    let restored = try #require(fixture.restored())
    #expect(restored.state == (try fixture.live()))
    #expect(restored.version == 1000)
  }

  /// A store restored unchanged journals from the saved JSON it was read from (not encoded
  /// again): its next changes are patches of that JSON, which a later restart applies.
  @Test func aRestoredStoreJournalsOnFromTheStateItWasReadFrom() throws {
    let fixture = JournalFixture()
    defer { remove(fixture.directory) }
    try fixture.persistence.commit()
    for n in 0..<40 { fixture.store.send(.add(id: "i\(n)", title: "item \(n)")) }
    fixture.store.send(.bumpSecret)
    try fixture.persistence.commit()
    fixture.persistence.flush()
    let persistence = Persistence(stateDirectory: fixture.directory, warn: { _ in })
    let saved = try #require(
      persistence.restore(storeID: "shelf", feature: "shelf", schemaVersion: 1))
    let store = try Store(feature: Shelf(), id: "shelf", initial: nil, restoring: saved)
    #expect(store.version == fixture.store.version)
    store.observer = { persistence.record($0) }
    persistence.attach(store, schemaVersion: 1)
    #expect(store.journaledState == (try JSONValueEncoder().encode(store.state)))
    store.send(.rename(id: "i3", title: "renamed after the restart"))
    store.send(.add(id: "new", title: "added after the restart"))
    store.send(.bumpSecret)
    try persistence.commit()
    #expect(try fixture.database().journalCount(store: "shelf") == 2, "no whole snapshot")
    #expect(try fixture.database().load(store: "shelf")?.snapshot?[2] == .integer(0))
    let again = try #require(fixture.restored())
    #expect(again.state == (try JSONValueEncoder().encode(store.state)))
    #expect(again.state["secret"] == 2)
    #expect(again.version == store.version)
  }

  @Test func aChangeOfPrivateStateAloneIsJournaled() throws {
    let fixture = JournalFixture()
    defer { remove(fixture.directory) }
    fixture.store.send(.add(id: "a", title: "A"))
    try fixture.persistence.commit()
    let version = fixture.store.version
    fixture.store.send(.bumpSecret)
    #expect(fixture.store.version == version, "the view did not change")
    #expect(fixture.persistence.hasPendingChanges)
    try fixture.persistence.commit()
    let restored = try #require(fixture.restored())
    #expect(restored.state["secret"] == 1)
    #expect(restored.version == version)
  }

  @Test(.timeLimit(.minutes(1))) func compactionReplacesTheJournalAndKeepsLaterChanges()
    async throws
  {
    let fixture = JournalFixture(compactionMinimum: 1)
    defer { remove(fixture.directory) }
    try fixture.persistence.commit()
    for n in 0..<20 { fixture.store.send(.add(id: "i\(n)", title: "item \(n)")) }
    // The journal now outweighs the tiny snapshot: this commit starts a compaction.
    try fixture.persistence.commit()
    let encoding = try #require(fixture.persistence.lastCompaction)
    // Changes made while it encodes are journaled after the rows it covers.
    fixture.store.send(.rename(id: "i3", title: "during"))
    try fixture.persistence.commit()
    await encoding.value
    try fixture.persistence.commit()  // writes the compacted snapshot
    let database = fixture.database()
    #expect(try database.journalCount(store: "shelf") == 1)
    let snapshot = try #require(try database.load(store: "shelf")?.snapshot)
    #expect(snapshot[2] == .integer(20))
    let restored = try #require(fixture.restored())
    #expect(restored.state == (try fixture.live()))
    #expect(restored.version == fixture.store.version)
  }

  /// Without a file there is no background connection: the next group commit writes it.
  @Test(.timeLimit(.minutes(1))) func anInMemoryDatabaseCompactsInTheNextCommit() async throws {
    let persistence = Persistence(stateDirectory: nil, compactionMinimum: 1)
    let store = Store(feature: Shelf(), id: "shelf")
    store.observer = { persistence.record($0) }
    persistence.attach(store, schemaVersion: 1)
    try persistence.commit()
    for n in 0..<20 { store.send(.add(id: "i\(n)", title: "item \(n)")) }
    try persistence.commit()
    let encoding = try #require(persistence.lastCompaction)
    await encoding.value
    // The commit it scheduled, or this one: whichever runs first writes it.
    await persistence.scheduledCommit?.value
    try persistence.commit()
    #expect(try persistence.database.journalCount(store: "shelf") == 0)
    let restored = persistence.restore(storeID: "shelf", feature: "shelf", schemaVersion: 1)
    #expect(restored?.state == (try JSONValueEncoder().encode(store.state)))
  }

  @Test func aStaleCompactionIsDroppedAfterAWholeSnapshot() async throws {
    let fixture = JournalFixture(compactionMinimum: 1)
    defer { remove(fixture.directory) }
    try fixture.persistence.commit()
    for n in 0..<20 { fixture.store.send(.add(id: "i\(n)", title: "item \(n)")) }
    try fixture.persistence.commit()
    let encoding = try #require(fixture.persistence.lastCompaction)
    fixture.persistence.changed(storeID: "shelf")  // asks for a whole snapshot
    fixture.store.send(.rename(id: "i1", title: "after"))
    try fixture.persistence.commit()
    await encoding.value
    try fixture.persistence.commit()
    let restored = try #require(fixture.restored())
    #expect(restored.state == (try fixture.live()))
  }

  @Test func aFailedCommitKeepsItsChangesForTheNextOne() throws {
    let fixture = JournalFixture()
    defer { remove(fixture.directory) }
    try fixture.persistence.commit()
    let path = try #require(fixture.persistence.databasePath)
    let saboteur = try SQLiteConnection(path: path)
    try saboteur.execute(
      """
      CREATE TRIGGER refuse BEFORE INSERT ON journal
      BEGIN SELECT RAISE(ABORT, 'the disk says no'); END
      """)
    fixture.store.send(.add(id: "a", title: "A"))
    #expect(throws: CommitFailure.self) { try fixture.persistence.commit() }
    do {
      try fixture.persistence.commit()
    } catch {
      #expect(error.stores == ["shelf"])
      #expect(error.reason.contains("the disk says no"))
    }
    try saboteur.execute("DROP TRIGGER refuse")
    fixture.store.send(.add(id: "b", title: "B"))
    try fixture.persistence.commit()
    let restored = try #require(fixture.restored())
    #expect(restored.state == (try fixture.live()))
    #expect(restored.state["items"]?.arrayValue?.count == 2)
  }

  @Test func aCleanCloseLeavesNothingInTheWAL() throws {
    let fixture = JournalFixture()
    defer { remove(fixture.directory) }
    for n in 0..<30 { fixture.store.send(.add(id: "i\(n)", title: "item \(n)")) }
    try fixture.persistence.commit()
    fixture.persistence.flush()
    let wal = try #require(fixture.persistence.databasePath) + "-wal"
    let size = (try? FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int) ?? 0
    #expect(size == 0)
    try? FileManager.default.removeItem(atPath: wal)
    #expect(fixture.restored()?.state == (try fixture.live()))
  }

  @Test func aReadOnlyDatabaseIsRestoredAndNothingIsWritten() throws {
    let fixture = JournalFixture()
    defer { remove(fixture.directory) }
    fixture.store.send(.add(id: "a", title: "A"))
    try fixture.persistence.commit()
    fixture.persistence.flush()
    let path = try #require(fixture.persistence.databasePath)
    // Byte 18 of the header is the write version: above 2, SQLite opens the file read-only.
    var bytes = try #require(FileManager.default.contents(atPath: path))
    bytes[18] = 3
    try bytes.write(to: URL(fileURLWithPath: path))
    let warnings = Warnings()
    let readOnly = Persistence(stateDirectory: fixture.directory, warn: warnings.record)
    #expect(warnings.all.contains { $0.contains("read-only") })
    let restored = try #require(
      readOnly.restore(storeID: "shelf", feature: "shelf", schemaVersion: 1))
    #expect(restored.state == (try fixture.live()))
    let store = try Store(
      feature: Shelf(), id: "shelf", initial: nil, restoring: restored)
    store.observer = { readOnly.record($0) }
    readOnly.attach(store, schemaVersion: 1)
    store.send(.add(id: "b", title: "B"))
    try readOnly.commit()
    #expect(FileManager.default.contents(atPath: path) == bytes)
  }

  @Test func aTableWithOtherColumnsIsSetAsideAndSavingWorks() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    _ = Persistence(stateDirectory: directory)
    do {
      let other = try SQLiteConnection(
        path: (directory as NSString).appendingPathComponent(SnapshotDatabase.fileName))
      try other.execute(
        "DROP TABLE snapshots; CREATE TABLE snapshots (store TEXT, blob TEXT); "
          + "INSERT INTO snapshots VALUES ('notes', 'keep me')")
    }
    let warnings = Warnings()
    let persistence = Persistence(stateDirectory: directory, warn: warnings.record)
    #expect(warnings.all.contains { $0.contains("table snapshots") && $0.contains("renamed") })
    let store = FakeStore(id: "notes", feature: "notes", snapshot: ["ok": true])
    persistence.attach(store, schemaVersion: 1)
    try persistence.commit()
    let again = Persistence(stateDirectory: directory, warn: { _ in })
    #expect(
      again.restore(storeID: "notes", feature: "notes", schemaVersion: 1)?.state == ["ok": true])
    let kept = try SQLiteConnection(
      path: (directory as NSString).appendingPathComponent(SnapshotDatabase.fileName)
    ).query("SELECT name FROM sqlite_master WHERE name LIKE 'snapshots_set_aside_%'")
    #expect(kept.count == 1)
  }

  @Test func aSecondLockOnOneDirectoryNamesTheHolder() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    do {
      let held = try DirectoryLock(directory: directory)
      #expect(throws: DirectoryLock.Failure.self) { try DirectoryLock(directory: directory) }
      do {
        _ = try DirectoryLock(directory: directory)
      } catch {
        #expect(error.isHeld)
        #expect(error.holder == getpid())
        #expect(error.description.contains("pid \(getpid())"))
      }
      withExtendedLifetime(held) {}
    }
    // Released with its holder: the next one gets it.
    _ = try DirectoryLock(directory: directory)
  }
}

@Suite struct StoreJournalTests {
  @Test func patchesAccumulateUntilCommitted() {
    var journal = StoreJournal(feature: "f", schemaVersion: 1, version: 0, needsSnapshot: false)
    #expect(!journal.isDirty)
    journal.record([["op": "add", "path": "/a", "value": 1]], version: 1)
    journal.record([["op": "add", "path": "/b", "value": 2]], version: 2)
    let write = journal.write(store: "s") { "unused" }
    #expect(write?.snapshot == nil)
    #expect(write?.journal.count == 1)
    #expect(write?.journal.first?.version == 2)
    #expect(write?.journal.first?.patch.contains("/b") == true)
    if let write { journal.committed(write, lastSeq: 9) }
    #expect(!journal.isDirty)
    #expect(journal.lastSeq == 9)
    #expect(journal.journalBytes > 0)
  }

  @Test func aChangeWithoutAPatchAsksForAWholeSnapshot() {
    var journal = StoreJournal(feature: "f", schemaVersion: 2, version: 4, needsSnapshot: false)
    journal.record([["op": "add", "path": "/a", "value": 1]], version: 5)
    journal.record(nil, version: 6)
    let write = journal.write(store: "s") { "{\"a\":1}" }
    #expect(write?.snapshot?.version == 6)
    #expect(write?.snapshot?.schemaVersion == 2)
    #expect(write?.journal.isEmpty == true)
  }

  @Test func compactionWaitsUntilTheJournalOutweighsTheSnapshot() {
    var journal = StoreJournal(
      feature: "f", schemaVersion: 1, version: 0, needsSnapshot: false, snapshotBytes: 1000,
      journalBytes: 0)
    journal.compactionMinimum = 10
    journal.journalBytes = 900
    #expect(!journal.shouldCompact)
    journal.journalBytes = 1001
    #expect(journal.shouldCompact)
    journal.record([["op": "remove", "path": "/x"]], version: 1)
    #expect(!journal.shouldCompact, "only when the journal is what is on disk")
  }
}

@Suite struct SavedStateTests {
  func rows(version: SQLiteValue, journal: [[SQLiteValue]] = []) -> SavedRows {
    SavedRows(
      store: "s", snapshot: [.text("f"), .integer(1), version, .text("{\"n\":0}")],
      journal: journal)
  }

  @Test(arguments: [
    (SQLiteValue.integer(-1), "-1"), (.integer(Int64.max), String(Int64.max)),
    (.text("seven"), "'seven'"), (.real(1.5), "1.5"), (.real(1e30), "1e+30"),
  ])
  func aVersionOutOfRangeIsNamed(value: SQLiteValue, shown: String) {
    #expect(throws: SavedState.Unusable.self) { try SavedState(rows(version: value)) }
    do {
      _ = try SavedState(rows(version: value))
    } catch {
      #expect(error.reason.contains("version \(shown) is not a whole number"))
    }
  }

  @Test func theJournalIsAppliedInOrder() throws {
    let saved = try SavedState(
      rows(
        version: .integer(3),
        journal: [
          [.integer(1), .integer(4), .text(#"[{"op":"replace","path":"/n","value":1}]"#)],
          [.integer(2), .integer(4), .text(#"[{"op":"add","path":"/m","value":2}]"#)],
        ]))
    #expect(saved.state == ["n": 1, "m": 2])
    #expect(saved.version == 4)
    #expect(saved.lastSeq == 2)
  }

  /// What the replay retires is kept to its end, or let go after a row that replaced a large
  /// array whole: the state is the same either way.
  @Test func aJournalEditingAndResettingALargeArrayGivesItsState() throws {
    let count = 1_200  // past the 1,000 elements from which an array counts as large
    let list = "[" + (0..<count).map(String.init).joined(separator: ",") + "]"
    let reset = "[" + (0..<count).map { String($0 * 2) }.joined(separator: ",") + "]"
    let saved = try SavedState(
      SavedRows(
        store: "s", snapshot: [.text("f"), .integer(1), .integer(1), .text(#"{"l":\#(list)}"#)],
        journal: [
          [.integer(1), .integer(2), .text(#"[{"op":"replace","path":"/l/1","value":-1}]"#)],
          [.integer(2), .integer(3), .text(#"[{"op":"replace","path":"/l","value":\#(reset)}]"#)],
          [.integer(3), .integer(4), .text(#"[{"op":"remove","path":"/l/0"}]"#)],
          [.integer(4), .integer(5), .text(#"[{"op":"replace","path":"/l/2","value":-3}]"#)],
        ]))
    var expected = (0..<count).map { JSON.integer(Int64($0 * 2)) }
    expected.removeFirst()
    expected[2] = -3
    #expect(saved.state == ["l": .array(expected)])
    #expect(saved.version == 5)
    #expect(saved.lastSeq == 4)
  }

  @Test func aJournalThatGoesBackOrDoesNotApplyIsRefused() {
    #expect(throws: SavedState.Unusable.self) {
      try SavedState(
        rows(version: .integer(3), journal: [[.integer(1), .integer(2), .text("[]")]]))
    }
    #expect(throws: SavedState.Unusable.self) {
      try SavedState(
        rows(
          version: .integer(3),
          journal: [[.integer(1), .integer(4), .text(#"[{"op":"remove","path":"/zz"}]"#)]]))
    }
    #expect(throws: SavedState.Unusable.self) {
      try SavedState(SavedRows(store: "s", snapshot: nil, journal: [[.integer(1)]]))
    }
  }
}

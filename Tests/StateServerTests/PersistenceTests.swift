import Foundation
import JSON
import StateKit
import Synchronization
import Testing

@testable import StateServer

/// A store reduced to what persistence reads: id, feature, version and snapshot.
@StateActor
final class FakeStore: AnyStore {
  let id: String
  let featureName: String
  var version: UInt64 = 0
  var snapshot: JSON
  var published: JSON { snapshot }
  var observer: (@StateActor (Publication) -> Void)?

  init(id: String, feature: String, snapshot: JSON) {
    self.id = id
    self.featureName = feature
    self.snapshot = snapshot
  }

  func send(wire action: JSON, cause: JSON?) throws(ActionError) -> Transaction {
    throw .refused(type: "any", reason: "a fake store reduces nothing")
  }
  func settled(_ transaction: Transaction) async {}
  func idle() async {}
  func close() {}
}

/// Collects warnings so a test can check that something was reported.
final class Warnings: Sendable {
  private let lines = Mutex<[String]>([])
  var all: [String] { lines.withLock { $0 } }
  func record(_ line: String) { lines.withLock { $0.append(line) } }
}

/// A fresh temporary state directory (not created yet); the test removes it when done.
func temporaryStateDirectory() -> String {
  NSTemporaryDirectory() + "stateserver-persistence-\(UUID().uuidString)"
}

func remove(_ directory: String) {
  try? FileManager.default.removeItem(atPath: directory)
}

@StateActor
@Suite struct PersistenceTests {
  @Test func aRestartResumesTheSavedStateAndVersion() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let first = Persistence(stateDirectory: directory)
    let store = FakeStore(id: "notes", feature: "notes", snapshot: ["notes": ["a", "b"]])
    first.attach(store, schemaVersion: 3)
    store.version = 7
    first.changed(storeID: "notes")
    try first.commit()

    let second = Persistence(stateDirectory: directory)
    let restored = try #require(
      second.restore(storeID: "notes", feature: "notes", schemaVersion: 3))
    #expect(restored.state == ["notes": ["a", "b"]])
    #expect(restored.version == 7)
  }

  /// Group commit: every change recorded before a commit shares its one transaction, and
  /// nothing is on disk before it (the server commits before any line reporting them leaves).
  @Test func aBurstOfChangesIsWrittenInOneTransaction() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let persistence = Persistence(stateDirectory: directory)
    let store = FakeStore(id: "profile", feature: "profile", snapshot: ["name": ""])
    persistence.attach(store, schemaVersion: 1)
    for n in 1...100 {
      store.version = UInt64(n)
      store.snapshot = ["name": .string("name \(n)")]
      persistence.changed(storeID: "profile")
    }
    #expect(persistence.transactionCount == 0)
    #expect(
      Persistence(stateDirectory: directory).restore(
        storeID: "profile", feature: "profile", schemaVersion: 1) == nil)

    try persistence.commit()
    #expect(persistence.transactionCount == 1)
    let restored = Persistence(stateDirectory: directory).restore(
      storeID: "profile", feature: "profile", schemaVersion: 1)
    #expect(restored?.version == 100)
    #expect(restored?.state == ["name": "name 100"])
  }

  // The limit only bounds a broken commit: the wait below is on the commit task itself.
  @Test(.timeLimit(.minutes(1))) func aChangeNoLineReportsIsCommittedWithoutACall() async throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let persistence = Persistence(stateDirectory: directory)
    let store = FakeStore(id: "notes", feature: "notes", snapshot: ["n": 0])
    persistence.attach(store, schemaVersion: 1)
    store.version = 3
    store.snapshot = ["n": 3]
    persistence.changed(storeID: "notes")
    let scheduled = try #require(persistence.scheduledCommit)
    await scheduled.value
    #expect(persistence.transactionCount == 1)
    #expect(!persistence.hasPendingChanges)
    let restored = Persistence(stateDirectory: directory).restore(
      storeID: "notes", feature: "notes", schemaVersion: 1)
    #expect(restored?.version == 3)
    #expect(restored?.state == ["n": 3])
  }

  @Test func aCommitWithoutChangesWritesNothing() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let persistence = Persistence(stateDirectory: directory)
    persistence.attach(FakeStore(id: "s", feature: "f", snapshot: [:]), schemaVersion: 1)
    try persistence.commit()  // the new store's first snapshot
    #expect(persistence.transactionCount == 1)
    try persistence.commit()
    #expect(persistence.transactionCount == 1)
  }

  @Test func detachWritesTheLastStateOfAClosingStore() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let persistence = Persistence(stateDirectory: directory)
    let store = FakeStore(id: "doc", feature: "notes", snapshot: ["notes": []])
    persistence.attach(store, schemaVersion: 1)
    store.version = 2
    persistence.changed(storeID: "doc")
    try persistence.detach(storeID: "doc")
    let restored = Persistence(stateDirectory: directory).restore(
      storeID: "doc", feature: "notes", schemaVersion: 1)
    #expect(restored?.version == 2)
  }

  @Test func aCorruptedDatabaseIsSetAsideAndAFreshOneIsUsed() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = directory + "/" + SnapshotDatabase.fileName
    let garbage = Data(repeating: 0x5A, count: 8192)
    try garbage.write(to: URL(fileURLWithPath: path))
    let warnings = Warnings()

    let persistence = Persistence(stateDirectory: directory, warn: warnings.record)
    #expect(persistence.databasePath == path)
    #expect(warnings.all.count == 1)
    #expect(warnings.all.first?.contains("moved it to") == true)
    let names = try FileManager.default.contentsOfDirectory(atPath: directory)
    let moved = try #require(
      names.first { $0.hasPrefix(SnapshotDatabase.fileName + ".set-aside-") })
    #expect(FileManager.default.contents(atPath: directory + "/" + moved) == garbage)

    let store = FakeStore(id: "notes", feature: "notes", snapshot: ["ok": true])
    persistence.attach(store, schemaVersion: 1)
    store.version = 1
    persistence.changed(storeID: "notes")
    try persistence.commit()
    #expect(
      Persistence(stateDirectory: directory).restore(
        storeID: "notes", feature: "notes", schemaVersion: 1)?.state == ["ok": true])
  }

  @Test func aSnapshotThatDoesNotParseIsSetAsideNotDeleted() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let database = SnapshotDatabase(directory: directory, warn: { _ in })
    try database.save([
      Snapshot(store: "notes", feature: "notes", schemaVersion: 1, version: 4, state: "{not json")
    ])
    let warnings = Warnings()
    let persistence = Persistence(stateDirectory: directory, warn: warnings.record)
    #expect(persistence.restore(storeID: "notes", feature: "notes", schemaVersion: 1) == nil)
    #expect(warnings.all.count == 1)
    #expect(try database.setAsideRows().map(\.store) == ["notes"])
    #expect(try database.load(store: "notes") == nil)
  }

  /// The state is read into pages of its own and parsed giving them back; a text that is not
  /// UTF-8 is read again and repaired as before, large or small, and one that does not parse
  /// after the pages went is still set aside.
  @Test func aSnapshotIsParsedFromItsOwnPagesAndRepairedWhenNotUTF8() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let database = SnapshotDatabase(directory: directory, warn: { _ in })
    let long = String(repeating: "x", count: 3 << 20)
    try database.save([
      Snapshot(store: "small", feature: "notes", schemaVersion: 1, version: 1, state: "{}"),
      Snapshot(store: "large", feature: "notes", schemaVersion: 1, version: 2, state: "{}"),
      Snapshot(
        store: "good", feature: "notes", schemaVersion: 1, version: 3,
        state: #"{"pad":""# + long + #"","n":[1,2,3]}"#),
      Snapshot(
        store: "bad", feature: "notes", schemaVersion: 1, version: 4,
        state: #"{"pad":""# + long + #"","n":[1,2,"#),
    ])
    // Bytes that are not UTF-8 inside a string (0xFF), small and after 3 MiB of text.
    let connection = try SQLiteConnection(path: directory + "/" + SnapshotDatabase.fileName)
    let texts: [(String, [UInt8])] = [
      ("small", Array(#"{"t":"a"#.utf8) + [0xFF] + Array(#"b"}"#.utf8)),
      ("large", Array(#"{"pad":""#.utf8) + Array(long.utf8) + [0xFF] + Array(#""}"#.utf8)),
    ]
    for (store, bytes) in texts {
      try connection.query(
        "UPDATE snapshots SET state = CAST(? AS TEXT) WHERE store = ?",
        [.blob(bytes), .text(store)])
    }
    let persistence = Persistence(stateDirectory: directory, warn: { _ in })
    #expect(
      persistence.restore(storeID: "small", feature: "notes", schemaVersion: 1)?.state
        == ["t": "a\u{FFFD}b"])
    // Compared apart: a failed expectation would print 3 MiB.
    let large = persistence.restore(storeID: "large", feature: "notes", schemaVersion: 1)?.state
    let repaired = large == ["pad": .string(long + "\u{FFFD}")]
    #expect(repaired, "the large state, repaired")
    let good = persistence.restore(storeID: "good", feature: "notes", schemaVersion: 1)?.state
    let parsed = good == ["pad": .string(long), "n": [1, 2, 3]]
    #expect(parsed, "the large state")
    #expect(persistence.restore(storeID: "bad", feature: "notes", schemaVersion: 1) == nil)
    #expect(try database.setAsideRows().map(\.store) == ["bad"])
  }

  @Test func aSnapshotOfAnotherSchemaVersionOrFeatureIsSetAside() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let database = SnapshotDatabase(directory: directory, warn: { _ in })
    try database.save([
      Snapshot(store: "notes", feature: "notes", schemaVersion: 1, version: 1, state: "{}"),
      Snapshot(store: "profile", feature: "counter", schemaVersion: 1, version: 1, state: "{}"),
    ])
    let persistence = Persistence(stateDirectory: directory, warn: { _ in })
    #expect(persistence.restore(storeID: "notes", feature: "notes", schemaVersion: 2) == nil)
    #expect(persistence.restore(storeID: "profile", feature: "profile", schemaVersion: 1) == nil)
    let reasons = try database.setAsideRows()
    #expect(reasons.map(\.store) == ["notes", "profile"])
    #expect(reasons.first?.reason.contains("schema version 1, expected 2") == true)
  }

  @Test func setAsideOnAFeatureDecodeFailureStartsTheStoreFresh() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let database = SnapshotDatabase(directory: directory, warn: { _ in })
    try database.save([
      Snapshot(store: "notes", feature: "notes", schemaVersion: 1, version: 9, state: "[1]")
    ])
    let persistence = Persistence(stateDirectory: directory, warn: { _ in })
    #expect(persistence.restore(storeID: "notes", feature: "notes", schemaVersion: 1) != nil)
    persistence.setAside(storeID: "notes", reason: "expected an object")
    #expect(persistence.restore(storeID: "notes", feature: "notes", schemaVersion: 1) == nil)
    #expect(try database.setAsideRows().first?.reason == "expected an object")
  }

  @Test func anUnusableStateDirectoryFallsBackToMemory() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    // A regular file where the directory should be: it cannot be created.
    _ = FileManager.default.createFile(atPath: directory, contents: Data("x".utf8))
    let warnings = Warnings()
    let persistence = Persistence(stateDirectory: directory, warn: warnings.record)
    #expect(persistence.databasePath == nil)
    #expect(warnings.all.count == 1)
    let store = FakeStore(id: "s", feature: "f", snapshot: ["v": 1])
    persistence.attach(store, schemaVersion: 1)
    persistence.changed(storeID: "s")
    try persistence.commit()
    #expect(persistence.restore(storeID: "s", feature: "f", schemaVersion: 1)?.state == ["v": 1])
  }

  @Test func attachUsesTheSchemaVersionTheStoreWasRestoredWith() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let persistence = Persistence(stateDirectory: directory)
    #expect(persistence.restore(storeID: "notes", feature: "notes", schemaVersion: 5) == nil)
    let store = FakeStore(id: "notes", feature: "notes", snapshot: ["v": 1])
    persistence.attach(store)
    persistence.changed(storeID: "notes")
    try persistence.commit()
    let again = Persistence(stateDirectory: directory)
    #expect(again.restore(storeID: "notes", feature: "notes", schemaVersion: 5) != nil)
  }

  @Test func attachWithoutRestoreUsesTheFeaturesSchemaVersion() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let persistence = Persistence(stateDirectory: directory, schemaVersions: ["notes": 4])
    let store = FakeStore(id: "opened-with-state", feature: "notes", snapshot: ["v": 1])
    persistence.attach(store)
    persistence.changed(storeID: store.id)
    try persistence.commit()
    let again = Persistence(stateDirectory: directory, warn: { _ in })
    #expect(again.restore(storeID: store.id, feature: "notes", schemaVersion: 4) != nil)
  }

  @Test func aDatabaseFromANewerStateserverIsSetAsideNotMisread() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let path = directory + "/" + SnapshotDatabase.fileName
    do {
      let newer = try SQLiteConnection(path: path)
      try newer.execute("CREATE TABLE future (x); PRAGMA user_version = 99;")
    }
    let warnings = Warnings()
    let persistence = Persistence(stateDirectory: directory, warn: warnings.record)
    #expect(persistence.databasePath == path)
    #expect(warnings.all.first?.contains("newer stateserver") == true)
    let names = try FileManager.default.contentsOfDirectory(atPath: directory)
    #expect(names.contains { $0.hasPrefix(SnapshotDatabase.fileName + ".set-aside-") })
  }

  @Test func ephemeralPersistenceWritesNoFile() throws {
    let persistence = Persistence(stateDirectory: nil)
    #expect(persistence.databasePath == nil)
  }

  @Test func theDefaultDirectoryFollowsXDG() {
    #expect(
      Persistence.defaultDirectory(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/h"])
        == "/x/state/stateserver")
    #expect(
      Persistence.defaultDirectory(environment: ["HOME": "/h"]) == "/h/.local/state/stateserver")
    // XDG says a relative path is invalid and must be ignored.
    #expect(
      Persistence.defaultDirectory(environment: ["XDG_STATE_HOME": "rel", "HOME": "/h"])
        == "/h/.local/state/stateserver")
  }
}

@StateActor
@Suite struct PersistenceStoreIDTests {
  /// Regression: ids were bound up to their first NUL, so "a\0b" and "a\0c" shared a row.
  @Test func storeIdsWithANulStayDistinct() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let persistence = Persistence(stateDirectory: directory)
    for (id, value) in [("a\u{0}b", 7), ("a\u{0}c", 9)] {
      let store = FakeStore(id: id, feature: "counter", snapshot: ["count": .integer(Int64(value))])
      persistence.attach(store, schemaVersion: 1)
      store.version = UInt64(value)
      persistence.changed(storeID: id)
    }
    try persistence.commit()
    let again = Persistence(stateDirectory: directory)
    #expect(again.restore(storeID: "a\u{0}b", feature: "counter", schemaVersion: 1)?.version == 7)
    #expect(again.restore(storeID: "a\u{0}c", feature: "counter", schemaVersion: 1)?.version == 9)
    #expect(again.restore(storeID: "a", feature: "counter", schemaVersion: 1) == nil)
    #expect(again.restore(storeID: "", feature: "counter", schemaVersion: 1) == nil)
  }
}

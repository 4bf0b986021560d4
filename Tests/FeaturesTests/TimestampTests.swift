import Features
import Foundation
import JSON
import StateKit
import StateKitTesting
import Testing

/// Timestamps in state are `Date`s since issue 15; before, they were `String`s written by
/// `Date.ISO8601FormatStyle(includingFractionalSeconds: true)`. The wire and the snapshots must
/// not notice: the same strings go out, and what the previous version saved still loads.
@StateActor
@Suite struct TimestampTests {
  let clock = TestClock()

  /// A notes snapshot exactly as the String version wrote it (timestamps with milliseconds).
  static let notesSavedByTheStringVersion: JSON = [
    "notes": [
      [
        "id": "note-1", "serverId": nil, "text": "x", "createdAt": "2027-01-15T08:00:00.000Z",
        "updatedAt": "2027-01-15T08:00:01.374Z", "syncStatus": "pendingUpload",
        "serverText": nil,
      ]
    ],
    "sync": ["status": "idle", "lastSyncedAt": "2027-01-15T08:00:02.999Z", "message": nil],
  ]

  @Test func aSnapshotWithStringTimestampsLoadsAndPublishesTheSameStrings() throws {
    let feature = NotesFeature(backend: testBackend(clock: clock), clock: clock)
    let store = try Store(
      feature: feature, id: "notes", initial: nil,
      restoring: (Self.notesSavedByTheStringVersion, 3))
    defer { store.close() }
    let note = try #require(store.state.notes[id: "note-1"])
    #expect(note.createdAt == fixedTimestamp)
    #expect(note.updatedAt == Date(timeIntervalSince1970: 1_800_000_001.374))
    #expect(store.state.sync.lastSyncedAt == Date(timeIntervalSince1970: 1_800_000_002.999))
    #expect(store.published["notes"]?[0]?["createdAt"] == "2027-01-15T08:00:00.000Z")
    #expect(store.published["notes"]?[0]?["updatedAt"] == "2027-01-15T08:00:01.374Z")
    #expect(store.published["sync"]?["lastSyncedAt"] == "2027-01-15T08:00:02.999Z")
    // Saved again, the snapshot is the one read: a restart changes nothing on disk.
    let saved = try JSONValueEncoder().encode(store.state)
    #expect(saved["notes"]?[0] == Self.notesSavedByTheStringVersion["notes"]?[0])
    #expect(saved["sync"]?["lastSyncedAt"] == "2027-01-15T08:00:02.999Z")
  }

  /// The old format's every millisecond: the String version truncated, `.system` now rounds
  /// down to whole milliseconds, and each one reads back as the very `Date` written.
  @Test func everyMillisecondOfASecondSurvivesTheSnapshotExactly() throws {
    for millisecond in 0..<1000 {
      let date = ReduceTime.date(1_800_000_000_000 + Int64(millisecond))
      let wire = try JSONValueEncoder().encode(
        Note(id: "a", text: "x", createdAt: date, updatedAt: date))
      let expected = String(format: "2027-01-15T08:00:00.%03dZ", millisecond)
      #expect(wire["createdAt"] == .string(expected))
      let back = try JSONValueDecoder().decode(Note.self, from: wire)
      #expect(back.createdAt == date, "\(expected)")
    }
  }

  @Test func theSystemClockReadsWholeMillisecondsAndTheReduceStampInsideAReduce() {
    let outside = WallClock.system.now().timeIntervalSince1970 * 1000
    #expect(outside == outside.rounded(.down))
    let stamped = ReduceTime.reducing(at: 1_800_000_000_374) { WallClock.system.now() }
    #expect(stamped == ReduceTime.date(1_800_000_000_374))
  }

  @Test func aTimestampThatIsNotADateIsRefusedWithItsPointer() throws {
    let state: JSON = [
      "notes": [
        ["id": "a", "text": "x", "createdAt": "yesterday", "updatedAt": "2027-01-15T08:00:00Z"]
      ]
    ]
    #expect {
      try JSONValueDecoder().decode(NotesFeature.State.self, from: state)
    } throws: { error in
      guard let error = error as? JSONDecodingError else { return false }
      return error.pointer == "/notes/0/createdAt" && error.reason.contains("ISO 8601")
    }
  }
}

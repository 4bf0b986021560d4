import Features
import JSON
import StateKit
import StateKitTesting
import Testing

/// A version never names two states across a restart: a store resumes at its saved version
/// only when its decoded state is the one saved, and the persistent features say so without
/// encoding their whole state again (`Feature.decodingChanged(_:from:)`).
@StateActor
@Suite struct RestoreVersionTests {
  let clock = TestClock()

  func notes() -> NotesFeature {
    NotesFeature(backend: testBackend(clock: clock), clock: clock, wallClock: fixedWallClock)
  }

  func state(_ count: Int, sync: NotesFeature.SyncState.Status) -> NotesFeature.State {
    var state = NotesFeature.State(
      notes: IdentifiedArray(
        (0..<count).map {
          Note(
            id: "n\($0)", text: "note \($0)", createdAt: fixedTimestamp, updatedAt: fixedTimestamp)
        }),
      sync: NotesFeature.SyncState(status: sync), nextNumber: count + 1)
    state.baseRevisions["n0"] = 3
    return state
  }

  @Test func notesSavedMidSyncComeBackIdleAtTheNextVersion() throws {
    let saved = try JSONValueEncoder().encode(state(3, sync: .syncing))
    #expect(NotesFeature.decodingChanged(try decoded(saved), from: saved) == true)
    let store = try Store(feature: notes(), id: "n", initial: nil, restoring: (saved, 9))
    defer { store.close() }
    #expect(store.version == 10)
    #expect(store.state == state(3, sync: .idle))
  }

  @Test func notesSavedSettledComeBackAtTheSameVersion() throws {
    for status in [NotesFeature.SyncState.Status.idle, .offline, .failed] {
      let saved = try JSONValueEncoder().encode(state(3, sync: status))
      #expect(NotesFeature.decodingChanged(try decoded(saved), from: saved) == false)
      let store = try Store(feature: notes(), id: "n", initial: nil, restoring: (saved, 9))
      defer { store.close() }
      #expect(store.version == 9)
      #expect(store.state == state(3, sync: status))
      // What the feature said is what the whole comparison finds.
      #expect(try JSONValueEncoder().encode(store.state).equalsByValue(saved))
    }
  }

  /// A notes state this feature did not write (members left out, filled in by the decoding)
  /// is compared whole: it is another state, so the next version.
  @Test func notesSavedByAnotherWriterAreComparedWhole() throws {
    let saved: JSON = ["notes": [], "sync": ["status": "idle"]]
    #expect(NotesFeature.decodingChanged(try decoded(saved), from: saved) == nil)
    let store = try Store(feature: notes(), id: "n", initial: nil, restoring: (saved, 9))
    defer { store.close() }
    #expect(store.version == 10)
    let whole = try JSONValueEncoder().encode(state(0, sync: .idle))
    #expect(NotesFeature.decodingChanged(try decoded(whole), from: whole) == false)
  }

  @Test func aSettledUsersCacheComesBackAtTheSameVersion() throws {
    let users = IdentifiedArray([User(id: 1, name: "Ada Abara", email: "ada@example.com")])
    let settled = UsersFeature.State(
      load: freshLoad, source: .cache, users: users, results: users,
      edits: [UserEdit(id: 1, name: "Ada L", baseVersion: 1, status: .pending)])
    let saved = try JSONValueEncoder().encode(settled)
    let feature = UsersFeature(
      backend: testBackend(clock: clock), clock: clock, wallClock: fixedWallClock)
    #expect(UsersFeature.decodingChanged(settled, from: saved) == false)
    let store = try Store(feature: feature, id: "u", initial: nil, restoring: (saved, 4))
    defer { store.close() }
    #expect(store.version == 4)
    #expect(store.state == settled)
    for unsettled in [
      UsersFeature.State(load: freshLoad, source: .network, users: users, results: users),
      UsersFeature.State(load: freshLoad, source: .cache, users: users, searching: true),
      UsersFeature.State(
        load: LoadState(status: .loading), source: .cache, users: users, results: users),
    ] {
      let saved = try JSONValueEncoder().encode(unsettled)
      let decoded = try JSONValueDecoder().decode(UsersFeature.State.self, from: saved)
      #expect(UsersFeature.decodingChanged(decoded, from: saved) == true)
    }
  }

  private func decoded(_ saved: JSON) throws -> NotesFeature.State {
    try JSONValueDecoder().decode(NotesFeature.State.self, from: saved)
  }
}

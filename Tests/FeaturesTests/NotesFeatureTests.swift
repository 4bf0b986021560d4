import Features
import JSON
import StateKit
import StateKitTesting
import Testing

@StateActor
@Suite struct NotesFeatureTests {
  let clock = TestClock()

  func feature(_ backend: Backend) -> NotesFeature {
    NotesFeature(backend: backend, clock: clock, wallClock: fixedWallClock)
  }

  func note(
    _ id: String, _ text: String, _ status: Note.SyncStatus = .pendingUpload,
    serverId: String? = nil
  )
    -> Note
  {
    Note(
      id: id, serverId: serverId, text: text, createdAt: fixedTimestamp, updatedAt: fixedTimestamp,
      syncStatus: status)
  }

  /// A state whose notes were synchronized as `srv-1`... at revision 1 on `backend`.
  func synchronized(_ texts: [String], on backend: Backend) async throws -> NotesFeature.State {
    var state = NotesFeature.State()
    let latency = await backend.currentStatus.latencyMs
    await backend.setLatency(ms: 0)
    for (offset, text) in texts.enumerated() {
      let id = "note-\(offset + 1)"
      let receipt = try await backend.uploadNote(
        NoteUpload(id: id, serverId: nil, text: text, baseRevision: nil))
      state.insert(note(id, text, .synchronized, serverId: receipt.serverId))
      state.baseRevisions[id] = receipt.revision
    }
    state.nextNumber = texts.count + 1
    await backend.setLatency(ms: latency)
    return state
  }

  @Test func addCreatesAPendingNoteAndBlankTextIsRefused() async {
    let feature = feature(testBackend(clock: clock))
    let store = TestStore(feature: feature)
    await store.send(.add(text: "Heron at the pier")) {
      $0.insert(self.note("note-1", "Heron at the pier"))
      $0.nextNumber = 2
    }
    #expect(feature.view(of: store.state).sync.pending == 1)
    await store.finish()
    let refusals = TestStore(feature: feature)
    refusals.send(wire: ["type": "add", "text": "  "], refusedWith: -32602, pointer: "/text")
    refusals.send(
      wire: ["type": "edit", "id": "note-1", "text": ""], refusedWith: -32602, pointer: "/text")
  }

  @Test func syncUploadsPendingNotesAndMarksThemSynchronized() async {
    let backend = testBackend(clock: clock)
    var state = NotesFeature.State()
    state.insert(note("a", "one"))
    state.insert(note("b", "two"))
    let feature = feature(backend)
    let store = TestStore(feature: feature, initialState: state)
    await store.send(.sync) { $0.sync.status = .syncing }
    await clock.run(until: store)
    await store.receive(.internal(.uploaded(id: "a", text: "one", serverId: "srv-1", revision: 1)))
    {
      $0.baseRevisions["a"] = 1
      $0.update("a") {
        $0.serverId = "srv-1"
        $0.syncStatus = .synchronized
      }
    }
    await store.receive(.internal(.uploaded(id: "b", text: "two", serverId: "srv-2", revision: 1)))
    {
      $0.baseRevisions["b"] = 1
      $0.update("b") {
        $0.serverId = "srv-2"
        $0.syncStatus = .synchronized
      }
    }
    await store.receive(.internal(.syncFinished(failures: 0))) {
      $0.sync = .init(status: .idle, lastSyncedAt: fixedTimestamp)
    }
    #expect(feature.view(of: store.state).sync.pending == 0)
    await store.finish()
  }

  /// Issue 9: the upload succeeded, then a crash lost its confirmation (`uploaded` was never
  /// committed), so the restarted store syncs the same note again: the server recognises the
  /// retry by its idempotency key and answers with the first copy instead of making another.
  @Test func aSyncRetriedAfterItsConfirmationWasLostMakesNoSecondCopy() async {
    let backend = testBackend(clock: clock)
    var state = NotesFeature.State()
    state.insert(note("a", "one"))
    let feature = feature(backend)
    for run in 1...2 {
      let store = TestStore(feature: feature, initialState: state)
      await store.send(.sync) { $0.sync.status = .syncing }
      await clock.run(until: store)
      await store.receive(
        .internal(.uploaded(id: "a", text: "one", serverId: "srv-1", revision: 1))
      ) {
        $0.baseRevisions["a"] = 1
        $0.update("a") {
          $0.serverId = "srv-1"
          $0.syncStatus = .synchronized
        }
      }
      await store.receive(.internal(.syncFinished(failures: 0))) {
        $0.sync = .init(status: .idle, lastSyncedAt: fixedTimestamp)
      }
      await store.finish()
      #expect(await backend.currentStatus.requests["uploadNote"] == run)
    }
  }

  @Test func offlineLeavesNotesPendingWithStatusOffline() async {
    let backend = testBackend(clock: clock)
    await backend.setOnline(false)
    var state = NotesFeature.State()
    state.insert(note("a", "one"))
    let store = TestStore(feature: feature(backend), initialState: state)
    await store.send(.sync) { $0.sync.status = .syncing }
    await store.receive(.internal(.wentOffline)) {
      $0.sync.status = .offline
      $0.sync.message = "You're offline. Notes will sync when you're back online."
    }
    #expect(store.state.notes[id: "a"]?.syncStatus == .pendingUpload)
    #expect(store.state.pending == 1)
    await store.finish()
  }

  /// With nothing pending there is no request to fail, yet a sync while offline must say
  /// offline rather than record a successful sync.
  @Test func syncWithNothingPendingWhileOfflineSaysOffline() async {
    let backend = testBackend(clock: clock)
    await backend.setOnline(false)
    let store = TestStore(feature: feature(backend))
    await store.send(.sync) { $0.sync.status = .syncing }
    await store.receive(.internal(.wentOffline)) {
      $0.sync.status = .offline
      $0.sync.message = "You're offline. Notes will sync when you're back online."
    }
    #expect(store.state.sync.lastSyncedAt == nil)
    await store.finish()
    await backend.setOnline(true)
    await store.send(.sync) {
      $0.sync.status = .syncing
      $0.sync.message = nil
    }
    await store.receive(.internal(.syncFinished(failures: 0))) {
      $0.sync = NotesFeature.SyncState(status: .idle, lastSyncedAt: fixedTimestamp)
    }
    #expect(await backend.currentStatus.requests.isEmpty)
    await store.finish()
  }

  @Test func uploadsAreRetriedABoundedNumberOfTimesThenFail() async {
    let backend = testBackend(clock: clock, failRate: 1)
    var state = NotesFeature.State()
    state.insert(note("a", "one"))
    let store = TestStore(feature: feature(backend), initialState: state)
    await store.send(.sync) { $0.sync.status = .syncing }
    await clock.run(until: store)
    await store.receive(.internal(.uploadFailed(id: "a"))) {
      $0.update("a") { $0.syncStatus = .failed }
    }
    await store.receive(.internal(.syncFinished(failures: 1))) {
      $0.sync.status = .failed
      $0.sync.message = "1 note could not be synced. Try again later."
    }
    #expect(await backend.currentStatus.requests["uploadNote"] == 4)
    // Backoff: 100, 200, 400 ms between four 50 ms attempts.
    #expect(clock.now.offset == .milliseconds(4 * 50 + 100 + 200 + 400))
    #expect(store.state.pending == 1)
    await store.finish()
  }

  @Test func aServerChangeBecomesAConflictAndIsNeverOverwritten() async throws {
    let backend = testBackend(clock: clock)
    var state = try await synchronized(["mine"], on: backend)
    let store = TestStore(feature: feature(backend), initialState: state)
    #expect(await backend.remoteEdit(noteId: "note-1", text: "theirs"))
    await store.send(.edit(id: "note-1", text: "mine, edited")) {
      $0.update("note-1") {
        $0.text = "mine, edited"
        $0.syncStatus = .pendingUpload
      }
    }
    await store.send(.sync) { $0.sync.status = .syncing }
    await clock.run(until: store)
    await store.receive(.internal(.conflicted(id: "note-1", serverText: "theirs", revision: 2))) {
      $0.baseRevisions["note-1"] = 2
      $0.update("note-1") {
        $0.syncStatus = .conflict
        $0.serverText = "theirs"
      }
    }
    await store.receive(.internal(.syncFinished(failures: 0))) {
      $0.sync = .init(status: .idle, lastSyncedAt: fixedTimestamp)
    }
    // A conflict is not uploaded again until resolved.
    await store.send(.sync) { $0.sync.status = .syncing }
    await store.receive(.internal(.syncFinished(failures: 0))) { $0.sync.status = .idle }
    #expect(await backend.currentStatus.requests["uploadNote"] == 2)

    await store.send(.resolveConflict(id: "note-1", keep: .local)) {
      $0.update("note-1") {
        $0.syncStatus = .pendingUpload
        $0.serverText = nil
      }
    }
    await store.send(.sync) { $0.sync.status = .syncing }
    await clock.run(until: store)
    await store.receive(
      .internal(.uploaded(id: "note-1", text: "mine, edited", serverId: "srv-1", revision: 3))
    ) {
      $0.baseRevisions["note-1"] = 3
      $0.update("note-1") { $0.syncStatus = .synchronized }
    }
    await store.receive(.internal(.syncFinished(failures: 0))) { $0.sync.status = .idle }
    await store.finish()
    state = store.state
    #expect(state.notes[id: "note-1"]?.text == "mine, edited")
  }

  @Test func resolvingInFavourOfTheServerTakesItsText() async {
    var state = NotesFeature.State()
    var conflicted = note("n", "mine", .conflict, serverId: "srv-9")
    conflicted.serverText = "theirs"
    state.insert(conflicted)
    let store = TestStore(feature: feature(testBackend(clock: clock)), initialState: state)
    await store.send(.resolveConflict(id: "n", keep: .server)) {
      $0.update("n") {
        $0.text = "theirs"
        $0.syncStatus = .synchronized
        $0.serverText = nil
      }
    }
    await store.send(.resolveConflict(id: "n", keep: .server))  // no longer a conflict
    await store.finish()
  }

  @Test func anEditDuringItsUploadStaysPending() async {
    let backend = testBackend(clock: clock)
    var state = NotesFeature.State()
    state.insert(note("a", "first"))
    let store = TestStore(feature: feature(backend), initialState: state)
    await store.send(.sync) { $0.sync.status = .syncing }
    await clock.advance(by: .milliseconds(10))
    await store.send(.edit(id: "a", text: "second")) { $0.update("a") { $0.text = "second" } }
    await clock.run(until: store)
    await store.receive(
      .internal(.uploaded(id: "a", text: "first", serverId: "srv-1", revision: 1))
    ) {
      $0.baseRevisions["a"] = 1
      $0.update("a") { $0.serverId = "srv-1" }
    }
    await store.receive(.internal(.syncFinished(failures: 0))) {
      $0.sync = .init(status: .idle, lastSyncedAt: fixedTimestamp)
    }
    #expect(store.state.notes[id: "a"]?.syncStatus == .pendingUpload)
    await store.finish()
  }

  @Test func deletingASynchronizedNoteDeletesItOnTheServerAtTheNextSync() async throws {
    let backend = testBackend(clock: clock)
    let state = try await synchronized(["gone soon"], on: backend)
    let store = TestStore(feature: feature(backend), initialState: state)
    await store.send(.delete(id: "note-1")) {
      $0.remove(id: "note-1")
      $0.baseRevisions = [:]
      $0.pendingDeletes = ["srv-1"]
    }
    await store.send(.sync) { $0.sync.status = .syncing }
    await clock.run(until: store)
    await store.receive(.internal(.deleteConfirmed(serverId: "srv-1"))) { $0.pendingDeletes = [] }
    await store.receive(.internal(.syncFinished(failures: 0))) {
      $0.sync = .init(status: .idle, lastSyncedAt: fixedTimestamp)
    }
    #expect(await !backend.remoteEdit(noteId: "srv-1", text: "x"))
    await store.finish()
  }

  @Test func pendingFollowsEveryChange() async {
    // The view's pending is kept incrementally; check it against a full count after each step.
    let backend = testBackend(clock: clock)
    let store = TestStore(feature: feature(backend), exhaustivity: .off)
    func expectConsistent(sourceLocation: SourceLocation = #_sourceLocation) {
      let counted = store.state.notes.filter(\.needsUpload).count
      #expect(store.state.pending == counted, sourceLocation: sourceLocation)
    }
    for n in 1...5 { await store.send(.add(text: "note \(n)")) }
    expectConsistent()
    await store.send(.sync)
    await clock.run(until: store)
    await store.finish()
    expectConsistent()
    #expect(store.state.pending == 0)
    await store.send(.edit(id: "note-2", text: "changed"))
    await store.send(.delete(id: "note-3"))
    await store.send(.delete(id: "note-2"))
    await store.send(.add(text: "six"))
    expectConsistent()
    #expect(store.state.pending == 1)
  }

  @Test func aStateSavedWhileSyncingIsRestoredIdleWithItsPendingCount() throws {
    let decoded = try JSONValueDecoder().decode(
      NotesFeature.State.self,
      from: [
        "notes": [
          [
            "id": "a", "text": "x", "createdAt": "2026-01-01T00:00:00Z",
            "updatedAt": "2026-01-01T00:00:00.000Z",
            "syncStatus": "pendingUpload",
          ],
          [
            "id": "b", "text": "y", "createdAt": "2026-01-01T00:00:00Z",
            "updatedAt": "2026-01-01T00:00:00.000Z",
            "syncStatus": "synchronized",
          ],
        ],
        "sync": ["status": "syncing"],
      ])
    #expect(decoded.sync.status == .idle)
    #expect(decoded.pending == 1)
    #expect(decoded.notes[id: "a"]?.serverId == nil)
  }

  @Test func aStateWhoseNotesRepeatAnIdIsRefusedAtTheNotes() throws {
    let note: JSON = [
      "id": "a", "text": "x", "createdAt": "2026-01-01T00:00:00Z",
      "updatedAt": "2026-01-01T00:00:00.000Z", "syncStatus": "synchronized",
    ]
    #expect {
      try JSONValueDecoder().decode(NotesFeature.State.self, from: ["notes": [note, note]])
    } throws: { error in
      guard let error = error as? JSONDecodingError else { return false }
      return error.pointer == "/notes" && error.reason.contains("the ids of the elements repeat")
    }
  }

  @Test func theViewPublishesNullsAndThePendingCount() throws {
    var state = NotesFeature.State()
    state.insert(note("a", "x"))
    let store = Store(feature: feature(testBackend(clock: clock)), state: state)
    defer { store.close() }
    #expect(store.published["sync"]?["pending"] == 1)
    #expect(store.published["sync"]?["lastSyncedAt"] == .null)
    #expect(store.published["notes"]?[0]?["serverText"] == .null)
    #expect(store.published["notes"]?[0]?["serverId"] == .null)
  }

  /// Regression: a client's store/open state with nextNumber Int.max trapped on the next add.
  @Test func addWithTheLargestNextNumberNeverTraps() async {
    let store = TestStore(
      feature: feature(testBackend(clock: clock)), initialState: .init(nextNumber: .max),
      exhaustivity: .off)
    await store.send(.add(text: "still works"))
    #expect(store.state.notes.count == 1)
    #expect(store.state.nextNumber == .min)
    await store.finish()
  }
}

import Features
import StateKit
import StateKitTesting
import Testing

/// The notes sync as the reference long effect: it reports one unit per change, and a
/// cancelled sync puts the state right (`onCancel`) with the rest still pending.
@StateActor
@Suite struct NotesSyncProgressTests {
  let clock = TestClock()

  func pending(_ texts: [String]) -> NotesFeature.State {
    var state = NotesFeature.State()
    for (offset, text) in texts.enumerated() {
      state.insert(
        Note(
          id: "note-\(offset + 1)", text: text, createdAt: fixedTimestamp,
          updatedAt: fixedTimestamp))
    }
    return state
  }

  @Test func aSyncReportsOneUnitPerChange() async {
    let feature = NotesFeature(
      backend: testBackend(clock: clock), clock: clock, wallClock: fixedWallClock)
    let store = TestStore(
      feature: feature, initialState: pending(["one", "two"]), exhaustivity: .off)
    await store.send(.sync)
    await clock.run(until: store)
    await store.finish()
    #expect(
      store.progress == [
        .begin(done: 0, total: 2, message: "0 of 2 changes done"),
        .report(done: 1, total: 2, message: "1 of 2 changes done"),
        .report(done: 2, total: 2, message: "2 of 2 changes done"), .end(done: 2, total: 2),
      ])
  }

  @Test func aCancelledSyncIsIdleAgainWithTheRestPending() async {
    let feature = NotesFeature(
      backend: testBackend(clock: clock), clock: clock, wallClock: fixedWallClock)
    let store = Store(feature: feature, state: pending(["one", "two", "three"]))
    var heard: [ProgressUpdate] = []
    let transaction = store.send(.sync)
    store.observeProgress(of: transaction) { heard.append($0) }
    await store.settleEffects()
    await clock.advance(by: .milliseconds(50))
    await store.settleEffects()
    store.cancel(transaction)
    await store.settled(transaction)
    #expect(heard.last == .end(done: 1, total: 3, cancelled: true))
    let view = feature.view(of: store.state)
    #expect(view.sync.status == .idle)
    #expect(view.sync.pending == 2)
    #expect(view.sync.message?.contains("cancelled") == true)
  }
}

import Features
import JSON
import StateKit
import StateKitTesting
import Testing

@StateActor
@Suite struct ProfileFeatureTests {
  let clock = TestClock()

  @Test func canSaveIsFalseForABlankDraftOrWhileSaving() {
    let feature = ProfileFeature(backend: testBackend(clock: clock))
    #expect(!feature.view(of: .init(draft: "  ")).canSave)
    #expect(feature.view(of: .init(draft: "Ada")).canSave)
    #expect(!feature.view(of: .init(draft: "Ada", saveState: SaveState(status: .saving))).canSave)
  }

  @Test func aSuccessfulSaveSetsTheNameAndEmitsDismiss() async {
    let store = TestStore(feature: ProfileFeature(backend: testBackend(clock: clock)))
    await store.send(.edit(name: " Ada ")) { $0.draft = " Ada " }
    await store.send(.save) { $0.saveState = SaveState(status: .saving) }
    await clock.advance(by: .milliseconds(50))
    await store.receive(.internal(.saved(name: "Ada"))) {
      $0.displayName = "Ada"
      $0.draft = "Ada"
      $0.saveState = SaveState(status: .saved)
    }
    store.receiveEvents([["type": "dismiss"]])
    await store.send(.edit(name: "Ada L")) {
      $0.draft = "Ada L"
      $0.saveState = SaveState()
    }
    await store.finish()
  }

  @Test func saveWhileSavingSendsNothing() async {
    let backend = testBackend(clock: clock)
    let store = TestStore(
      feature: ProfileFeature(backend: backend), initialState: .init(draft: "Grace"))
    await store.send(.save) { $0.saveState = SaveState(status: .saving) }
    await store.send(.save)
    await clock.advance(by: .milliseconds(50))
    await store.receive(.internal(.saved(name: "Grace"))) {
      $0.displayName = "Grace"
      $0.saveState = SaveState(status: .saved)
    }
    store.receiveEvents([["type": "dismiss"]])
    #expect(await backend.currentStatus.requests["saveProfile"] == 1)
    await store.finish()
  }

  @Test func aBlankDraftIsNotSaved() async {
    let backend = testBackend(clock: clock)
    let store = TestStore(
      feature: ProfileFeature(backend: backend), initialState: .init(draft: " "))
    await store.send(.save)
    await clock.run(until: store)
    #expect(await backend.currentStatus.requests["saveProfile"] == nil)
    await store.finish()
  }

  @Test func cancelSaveReturnsToIdleKeepingTheDraft() async {
    let store = TestStore(
      feature: ProfileFeature(backend: testBackend(clock: clock)),
      initialState: .init(displayName: "Old", draft: "New"))
    await store.send(.save) { $0.saveState = SaveState(status: .saving) }
    await store.send(.cancelSave) { $0.saveState = SaveState() }
    await clock.run(until: store)
    #expect(store.state.displayName == "Old")
    await store.finish()
  }

  @Test func aFailureKeepsTheDraftAndShowsASafeMessage() async {
    let store = TestStore(
      feature: ProfileFeature(backend: testBackend(clock: clock, failRate: 1)),
      initialState: .init(displayName: "Old", draft: "New"))
    await store.send(.save) { $0.saveState = SaveState(status: .saving) }
    await clock.advance(by: .milliseconds(50))
    let message = "Could not save your profile. Please try again."
    await store.receive(.internal(.saveFailed(message: message))) {
      $0.saveState = SaveState(status: .failed, message: message)
    }
    await store.send(.dismissError) { $0.saveState = SaveState() }
    await store.finish()
  }

  @Test func aStateSavedWhileSavingIsRestoredIdle() throws {
    let decoded = try JSONValueDecoder().decode(
      ProfileFeature.State.self,
      from: [
        "displayName": "A", "draft": "B", "saveState": ["status": "saving", "message": nil],
      ])
    #expect(decoded == .init(displayName: "A", draft: "B", saveState: SaveState()))
  }

  @Test func theDefaultStoreIsPersistent() {
    #expect(ProfileFeature.isPersistent)
    #expect(ProfileFeature(backend: testBackend(clock: clock)).descriptor().isPersistent)
  }
}

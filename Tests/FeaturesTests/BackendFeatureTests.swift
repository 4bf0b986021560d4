import Features
import JSON
import StateKit
import StateKitTesting
import Testing

@StateActor
@Suite struct BackendFeatureTests {
  let clock = TestClock()

  @Test func settingsChangeTheViewAndTheActor() async {
    let backend = testBackend(clock: clock)
    let store = TestStore(
      feature: BackendFeature(backend: backend, initial: backend.initialStatus))
    await store.send(.setOnline(online: false)) { $0.online = false }
    await store.send(.setLatency(ms: 0)) { $0.latencyMs = 0 }
    await store.send(.setFailRate(rate: 0.5)) { $0.failRate = 0.5 }
    await store.finish()
    let status = await backend.currentStatus
    #expect((status.online, status.latencyMs, status.failRate) == (false, 0, 0.5))
  }

  @Test func theFallbacksSwitchesChangeTheViewAndTheActor() async {
    let backend = testBackend(clock: clock)
    let store = TestStore(
      feature: BackendFeature(backend: backend, initial: backend.initialStatus))
    await store.send(.setFallbackOnline(online: false)) { $0.fallback.online = false }
    await store.send(.setFallbackFailRate(rate: 0.75)) { $0.fallback.failRate = 0.75 }
    await store.finish()
    let status = await backend.currentStatus
    #expect(status.fallback == FallbackStatus(online: false, failRate: 0.75))
    #expect(status.online && status.failRate == 0)
  }

  @Test func aRemoteEditOfAnUnknownUserToasts() async {
    let backend = testBackend(clock: clock)
    let store = TestStore(
      feature: BackendFeature(backend: backend, initial: backend.initialStatus))
    await store.send(.remoteUserEdit(id: 999, name: "Ghost"))
    await store.receive(.internal(.remoteUserEditMissed(id: 999)))
    store.receiveEvents([["type": "toast", "message": "The server has no user 999."]])
    await store.send(.remoteUserEdit(id: 42, name: "Known"))
    await store.finish()
  }

  @Test func outOfRangeSettingsAreRefused() {
    let backend = testBackend(clock: clock)
    let feature = BackendFeature(backend: backend, initial: backend.initialStatus)
    let refusals = TestStore(feature: feature)
    refusals.send(wire: ["type": "setLatency", "ms": -1], refusedWith: -32602, pointer: "/ms")
    refusals.send(
      wire: ["type": "setFailRate", "rate": 1.5], refusedWith: -32602, pointer: "/rate")
    refusals.send(wire: ["type": "statusChanged"], refusedWith: -32003)
    refusals.send(
      wire: ["type": "setFallbackFailRate", "rate": -1], refusedWith: -32602, pointer: "/rate")
    refusals.send(
      wire: ["type": "remoteUserEdit", "id": 1, "name": ""], refusedWith: -32602, pointer: "/name")
  }

  @Test func aRemoteEditOfAnUnknownNoteToasts() async {
    let backend = testBackend(clock: clock)
    let store = TestStore(
      feature: BackendFeature(backend: backend, initial: backend.initialStatus))
    await store.send(.remoteEdit(noteId: "ghost", text: "boo"))
    await store.receive(.internal(.remoteEditMissed(noteId: "ghost")))
    store.receiveEvents([["type": "toast", "message": "The server has no note ghost."]])
    await store.finish()
  }

  @Test func theRegisteredStoreCountsRequestsBeforeTheirReplies() async throws {
    let backend = Backend(latencyMs: 0, clock: clock)
    let descriptors = Features.all(backend: backend, clock: clock, wallClock: fixedWallClock)
    #expect(
      descriptors.map(\.name)
        == ["backend", "counter", "users", "cart", "profile", "notes", "navigation"])
    let descriptor = try #require(descriptors.first { $0.name == "backend" })
    let store = try descriptor.makeStore("backend", nil, nil)
    defer { store.close() }
    _ = try await backend.listUsers()
    #expect(store.published["requests"] == ["listUsers": 1])
    #expect(store.version == 1)
  }
}

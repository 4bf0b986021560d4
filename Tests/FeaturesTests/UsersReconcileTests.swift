import Features
import JSON
import StateKit
import StateKitTesting
import Testing

/// Rule 3 of the users feature: the server's copies, the local renames and the cache,
/// reconciled per user by version.
@StateActor
@Suite struct UsersReconcileTests {
  let clock = TestClock()

  func feature(_ backend: Backend) -> UsersFeature {
    UsersFeature(backend: backend, clock: clock, wallClock: fixedWallClock)
  }

  func loaded(_ users: [User], source: UsersFeature.Source = .network) -> UsersFeature.State {
    let list = IdentifiedArray(users)
    return UsersFeature.State(load: freshLoad, source: source, users: list, results: list)
  }

  func renamed(_ user: User, _ name: String, version: Int) -> User {
    var copy = user
    copy.name = name
    copy.version = version
    return copy
  }

  @Test func aConfirmedServerVersionBeatsAnOlderCachedCopy() async throws {
    let all = await sampleUsers()
    let backend = testBackend(clock: clock)
    let fromServer = try #require(await backend.remoteUserEdit(id: 42, name: "Quentin Server"))
    #expect(fromServer.version == 2)
    let store = TestStore(feature: feature(backend), initialState: loaded(all, source: .cache))
    await store.send(.load) { $0.load.status = .loading }
    await clock.advance(by: .milliseconds(50))
    var expected = all
    expected[41] = fromServer
    await store.receive(.internal(.loaded(users: expected, source: .network))) {
      $0.load = freshLoad
      $0.source = .network
      $0.users[id: 42] = fromServer
      $0.results[id: 42] = fromServer
    }
    await store.expireList(on: clock)
    await store.finish()
  }

  @Test func aServerCopyOlderThanTheOneHeldIsDropped() async {
    let all = await sampleUsers()
    var held = all
    held[41] = renamed(all[41], "Quentin Newer", version: 3)
    let store = TestStore(
      feature: feature(testBackend(clock: clock)), initialState: loaded(held, source: .cache))
    // A reply read before the change the list already holds (a lagging replica, a slow load).
    await store.send(.internal(.loaded(users: all, source: .fallback))) {
      $0.source = .fallback
    }
    await store.send(.internal(.serverChanged(user: renamed(all[41], "Quentin Older", version: 2))))
    #expect(store.state.users[id: 42]?.name == "Quentin Newer")
    await store.expireList(on: clock)
    await store.finish()
  }

  @Test func aRenameIsPendingUntilTheServerConfirmsIt() async throws {
    let all = await sampleUsers()
    let backend = testBackend(clock: clock)
    let store = TestStore(feature: feature(backend), initialState: loaded(all))
    await store.send(.rename(id: 42, name: "Quentin H")) {
      $0.users[id: 42]?.name = "Quentin H"
      $0.results[id: 42]?.name = "Quentin H"
      $0.edits = [
        UserEdit(
          id: 42, name: "Quentin H", baseVersion: 1, previousName: "Quentin Hansen",
          status: .sending)
      ]
    }
    await clock.advance(by: .milliseconds(50))
    let confirmed = renamed(all[41], "Quentin H", version: 2)
    await store.receive(
      .internal(.renamed(id: 42, name: "Quentin H", baseVersion: 1, user: confirmed))
    ) {
      $0.users[id: 42] = confirmed
      $0.results[id: 42] = confirmed
      $0.edits = []
    }
    #expect(await backend.currentStatus.requests == ["renameUser": 1])
    await backend.setLatency(ms: 0)  // a reply that needs no test clock
    #expect(try await backend.listUsers()[41] == confirmed)
    await store.finish()
  }

  @Test func aPendingLocalEditIsKeptOverAnOlderServerCopyAndSent() async {
    let all = await sampleUsers()
    let backend = testBackend(clock: clock)
    // Renamed offline in an earlier run: the cache holds the edit, pending.
    var cache = loaded(all, source: .cache)
    cache.users[id: 42]?.name = "Quentin Offline"
    cache.results = cache.users
    cache.edits = [UserEdit(id: 42, name: "Quentin Offline", baseVersion: 1)]
    let store = TestStore(feature: feature(backend), initialState: cache)
    await store.send(.load) { $0.load.status = .loading }
    await clock.advance(by: .milliseconds(50))
    await store.receive(.internal(.loaded(users: all, source: .network))) {
      $0.load = freshLoad
      $0.source = .network
      $0.edits[id: 42]?.status = .sending  // kept over the server's version 1, and sent
    }
    await clock.advance(by: .milliseconds(50))
    let confirmed = renamed(all[41], "Quentin Offline", version: 2)
    await store.receive(
      .internal(.renamed(id: 42, name: "Quentin Offline", baseVersion: 1, user: confirmed))
    ) {
      $0.users[id: 42] = confirmed
      $0.results[id: 42] = confirmed
      $0.edits = []
    }
    await store.expireList(on: clock)
    await store.finish()
  }

  @Test func aServerChangeToAUserWithAPendingEditIsAConflictResolvedByAnAction() async throws {
    let all = await sampleUsers()
    let backend = testBackend(clock: clock)
    let store = TestStore(feature: feature(backend), initialState: loaded(all))
    await backend.setOnline(false)
    await store.send(.rename(id: 42, name: "Quentin Local")) {
      $0.users[id: 42]?.name = "Quentin Local"
      $0.results[id: 42]?.name = "Quentin Local"
      $0.edits = [
        UserEdit(
          id: 42, name: "Quentin Local", baseVersion: 1, previousName: "Quentin Hansen",
          status: .sending)
      ]
    }
    await store.receive(.internal(.renameFailed(id: 42, baseVersion: 1, gone: false))) {
      $0.edits[id: 42]?.status = .pending
    }
    await backend.setOnline(true)
    let remote = try #require(await backend.remoteUserEdit(id: 42, name: "Quentin Remote"))
    await store.send(.internal(.serverChanged(user: remote))) {
      $0.edits[id: 42] = UserEdit(
        id: 42, name: "Quentin Local", baseVersion: 1, previousName: "Quentin Hansen",
        status: .conflict, serverName: "Quentin Remote", serverVersion: 2)
    }
    #expect(store.state.users[id: 42]?.name == "Quentin Local")  // nothing overwritten
    await store.send(.resolveConflict(id: 42, keep: .local)) {
      $0.users[id: 42]?.version = 2
      $0.results[id: 42]?.version = 2
      $0.edits = [
        UserEdit(
          id: 42, name: "Quentin Local", baseVersion: 2, previousName: "Quentin Remote",
          status: .sending)
      ]
    }
    await clock.advance(by: .milliseconds(50))
    let final = renamed(all[41], "Quentin Local", version: 3)
    await store.receive(
      .internal(.renamed(id: 42, name: "Quentin Local", baseVersion: 2, user: final))
    ) {
      $0.users[id: 42] = final
      $0.results[id: 42] = final
      $0.edits = []
    }
    await store.finish()
  }

  @Test func keepingTheServerSideOfAConflictDropsTheLocalEdit() async {
    let all = await sampleUsers()
    var state = loaded(all)
    state.users[id: 7]?.name = "Local"
    state.results = state.users
    state.edits = [
      UserEdit(
        id: 7, name: "Local", baseVersion: 1, status: .conflict, serverName: "Server",
        serverVersion: 4)
    ]
    let store = TestStore(feature: feature(testBackend(clock: clock)), initialState: state)
    await store.send(.resolveConflict(id: 7, keep: .server)) {
      $0.users[id: 7] = self.renamed(all[6], "Server", version: 4)
      $0.results[id: 7] = self.renamed(all[6], "Server", version: 4)
      $0.edits = []
    }
    await store.send(.resolveConflict(id: 7, keep: .local))  // no conflict left: nothing
    await store.finish()
  }

  @Test func aRemoteEditRacingARenameInFlightEndsInAConflict() async throws {
    let all = await sampleUsers()
    let backend = testBackend(clock: clock)
    let store = TestStore(feature: feature(backend), initialState: loaded(all))
    await store.send(.rename(id: 42, name: "Quentin Local")) {
      $0.users[id: 42]?.name = "Quentin Local"
      $0.results[id: 42]?.name = "Quentin Local"
      $0.edits = [
        UserEdit(
          id: 42, name: "Quentin Local", baseVersion: 1, previousName: "Quentin Hansen",
          status: .sending)
      ]
    }
    // The rename reached the server (version 2); its reply is still on the way when someone
    // else's edit (version 3) is pushed.
    #expect(await backend.currentStatus.requests == ["renameUser": 1])
    let remote = try #require(await backend.remoteUserEdit(id: 42, name: "Quentin Remote"))
    #expect(remote.version == 3)
    await store.send(.internal(.serverChanged(user: remote))) {
      $0.edits[id: 42] = UserEdit(
        id: 42, name: "Quentin Local", baseVersion: 1, previousName: "Quentin Hansen",
        status: .conflict, serverName: "Quentin Remote", serverVersion: 3)
    }
    await clock.advance(by: .milliseconds(50))
    // The late confirmation of version 2 is older than the conflict's version 3: no change.
    await store.receive(
      .internal(
        .renamed(
          id: 42, name: "Quentin Local", baseVersion: 1,
          user: renamed(all[41], "Quentin Local", version: 2))))
    await store.finish()
  }

  @Test func aSecondRenameWaitsForTheFirstAndIsSentOnTheNewVersion() async {
    let all = await sampleUsers()
    let backend = testBackend(clock: clock)
    let store = TestStore(feature: feature(backend), initialState: loaded(all))
    await store.send(.rename(id: 42, name: "Q1")) {
      $0.users[id: 42]?.name = "Q1"
      $0.results[id: 42]?.name = "Q1"
      $0.edits = [
        UserEdit(
          id: 42, name: "Q1", baseVersion: 1, previousName: "Quentin Hansen", status: .sending)
      ]
    }
    await store.send(.rename(id: 42, name: "Q2")) {
      $0.users[id: 42]?.name = "Q2"
      $0.results[id: 42]?.name = "Q2"
      $0.edits[id: 42]?.name = "Q2"
    }
    await clock.advance(by: .milliseconds(50))
    await store.receive(
      .internal(
        .renamed(id: 42, name: "Q1", baseVersion: 1, user: renamed(all[41], "Q1", version: 2)))
    ) {
      $0.users[id: 42]?.version = 2
      $0.results[id: 42]?.version = 2
      $0.edits[id: 42]?.baseVersion = 2
      $0.edits[id: 42]?.previousName = "Q1"  // what the server now holds
    }
    await clock.advance(by: .milliseconds(50))
    let final = renamed(all[41], "Q2", version: 3)
    await store.receive(.internal(.renamed(id: 42, name: "Q2", baseVersion: 2, user: final))) {
      $0.users[id: 42] = final
      $0.results[id: 42] = final
      $0.edits = []
    }
    #expect(await backend.currentStatus.requests == ["renameUser": 2])  // and no conflict
    await store.finish()
  }

  @Test func blankRenamesAreRefusedAndUnknownUsersIgnored() async {
    let feature = feature(testBackend(clock: clock))
    let refusals = TestStore(feature: feature)
    refusals.send(
      wire: ["type": "rename", "id": 1, "name": "  "], refusedWith: -32602, pointer: "/name")
    refusals.send(
      wire: ["type": "resolveConflict", "id": 1, "keep": "mine"], refusedWith: -32602,
      pointer: "/keep")
    // A well-formed rename is accepted (what it changes is tested above).
    await TestStore(feature: feature, exhaustivity: .off)
      .send(wire: ["type": "rename", "id": 1, "name": "Ada"])
    let store = TestStore(feature: feature, initialState: loaded(await sampleUsers()))
    await store.send(.rename(id: 999, name: "Nobody"))
    await store.finish()
  }

  @Test func theRegisteredStoreHearsTheServersPushes() async throws {
    let backend = Backend(latencyMs: 0, clock: clock)
    let descriptors = Features.all(backend: backend, clock: clock, wallClock: fixedWallClock)
    let descriptor = try #require(descriptors.first { $0.name == "users" })
    let store = try #require(try descriptor.makeStore("users", nil, nil) as? Store<UsersFeature>)
    defer { store.close() }
    store.send(.internal(.loaded(users: await sampleUsers(), source: .network)))
    await backend.remoteUserEdit(id: 42, name: "Pushed")
    #expect(store.state.users[id: 42]?.name == "Pushed")
    #expect(store.state.users[id: 42]?.version == 2)
  }
}

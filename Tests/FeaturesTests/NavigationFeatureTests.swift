import Features
import JSON
import StateKit
import StateKitTesting
import Testing

@StateActor
@Suite struct NavigationFeatureTests {
  let clock = TestClock()

  func feature(_ backend: Backend) -> NavigationFeature {
    NavigationFeature(
      users: UsersFeature(backend: backend, clock: clock, wallClock: fixedWallClock))
  }

  func loaded(_ users: [User], path: [Destination] = []) -> NavigationFeature.State {
    let list = IdentifiedArray(users)
    return NavigationFeature.State(
      users: UsersFeature.State(
        load: LoadState(status: .loaded, lastUpdated: fixedTimestamp), users: list,
        results: list),
      path: path)
  }

  func users(_ action: UsersFeature.Action) -> NavigationFeature.Action {
    .users(action: ChildAction(action))
  }

  @Test func openURLLoadsUsersFirstThenSelectsAndPushes() async {
    let all = await sampleUsers()
    let store = TestStore(feature: feature(testBackend(clock: clock)))
    await store.send(.openURL(url: "app://users/42")) {
      $0.pendingUserId = 42
      $0.users.load.status = .loading
    }
    #expect(store.state.path.isEmpty)  // not before the user exists
    await clock.advance(by: .milliseconds(50))
    await store.receive(users(.internal(.loaded(users: all, source: .network)))) {
      $0.users.load = freshLoad
      $0.users.source = .network
      $0.users.users = IdentifiedArray(all)
      $0.users.results = IdentifiedArray(all)
      $0.pendingUserId = nil
      $0.users.selectedId = 42
      $0.path = [.userDetail(userId: 42)]
    }
    await store.finish()
  }

  @Test func openURLWithLoadedUsersSelectsAndPushesAtOnce() async {
    let store = TestStore(
      feature: feature(testBackend(clock: clock)), initialState: loaded(await sampleUsers()))
    await store.send(.openURL(url: "app://users/7")) {
      $0.users.selectedId = 7
      $0.path = [.userDetail(userId: 7)]
    }
    await store.send(.openURL(url: "app://users/7"))  // already showing it: no second screen
    await store.finish()
  }

  @Test func unknownOrMalformedURLsToastAndKeepThePath() async {
    let store = TestStore(
      feature: feature(testBackend(clock: clock)),
      initialState: loaded(await sampleUsers(), path: [.settings]))
    for url in ["app://users/999", "https://example.com", "app://users/x", "app://users/-1", ""] {
      await store.send(.openURL(url: url))
    }
    store.receiveEvents([
      ["type": "toast", "message": "User 999 does not exist."],
      ["type": "toast", "message": "Cannot open https://example.com."],
      ["type": "toast", "message": "Cannot open app://users/x."],
      ["type": "toast", "message": "Cannot open app://users/-1."],
      ["type": "toast", "message": "Cannot open ."],
    ])
    #expect(store.state.path == [.settings])
    await store.finish()
  }

  @Test func aDeepLinkWhoseLoadFailsToastsAndPushesNothing() async {
    let store = TestStore(feature: feature(testBackend(clock: clock, failRate: 1)))
    await store.send(.openURL(url: "app://users/42")) {
      $0.pendingUserId = 42
      $0.users.load.status = .loading
    }
    await clock.run(until: store)
    let message = "Could not load users. Please try again."
    await store.receive(users(.internal(.loadFailed(message: message, recoverable: true)))) {
      $0.users.load.status = .failed
      $0.users.load.error = LoadState.Failure(message: message, recoverable: true)
      $0.pendingUserId = nil
    }
    store.receiveEvents([["type": "toast", "message": .string("Cannot open user 42: \(message)")]])
    #expect(store.state.path.isEmpty)
    await store.finish()
  }

  @Test func pushPopAndPopToRoot() async {
    let store = TestStore(
      feature: feature(testBackend(clock: clock)), initialState: loaded(await sampleUsers()))
    await store.send(.push(destination: .userDetail(userId: 3))) {
      $0.path = [.userDetail(userId: 3)]
    }
    await store.send(.push(destination: .settings)) { $0.path.append(.settings) }
    await store.send(.pop) { $0.path.removeLast() }
    await store.send(.popToRoot) { $0.path = [] }
    await store.send(.pop)  // empty: nothing to pop
    await store.send(.push(destination: .userDetail(userId: 404)))
    store.receiveEvents([["type": "toast", "message": "User 404 does not exist."]])
    await store.finish()
  }

  @Test func childActionsReachUsersAndADeletedUsersScreenIsPopped() async {
    let store = TestStore(
      feature: feature(testBackend(clock: clock)),
      initialState: loaded(await sampleUsers(), path: [.userDetail(userId: 5), .settings]))
    await store.send(users(.select(id: 5))) { $0.users.selectedId = 5 }
    await store.send(users(.delete(id: 5))) {
      $0.users.users.remove(id: 5)
      $0.users.results.remove(id: 5)
      $0.users.selectedId = nil
      $0.path = []
    }
    await clock.run(until: store)
    await store.finish()
  }

  @Test func theWireFormOfChildActionsIsTheChildsOwn() {
    let feature = feature(testBackend(clock: clock))
    let store = Store(feature: feature)
    defer { store.close() }
    #expect(throws: Never.self) {
      try store.send(wire: ["type": "users", "action": ["type": "select", "id": 1]], cause: nil)
    }
    let refusals = TestStore(feature: feature)
    // A child's internal action is refused as any internal action is (-32003), not invalid.
    refusals.send(
      wire: ["type": "users", "action": ["type": "loaded", "users": []]], refusedWith: -32003)
    refusals.send(
      wire: ["type": "users", "action": ["type": "select", "id": "x"]], refusedWith: -32602,
      pointer: "/action/id")
    refusals.send(
      wire: ["type": "push", "destination": ["screen": "moon"]], refusedWith: -32602,
      pointer: "/destination/screen")
  }
}

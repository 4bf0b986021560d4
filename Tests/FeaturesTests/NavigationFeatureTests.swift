import Features
import JSON
import StateKit
import StateKitTesting
import Testing

@StateActor
@Suite struct NavigationFeatureTests {
  let clock = TestClock()

  /// The users state after a load of `users`.
  func loaded(_ users: [User]) -> UsersFeature.State {
    let list = IdentifiedArray(users)
    return UsersFeature.State(
      load: LoadState(status: .loaded, lastUpdated: fixedTimestamp), users: list, results: list)
  }

  /// A stack reading a fixed users state at `version`.
  func feature(_ users: UsersFeature.State, version: UInt64 = 4) -> NavigationFeature {
    NavigationFeature(users: Shared(fixed: users, version: version))
  }

  @Test func pushResolvesTheUserAgainstTheSharedUsers() async {
    let all = await sampleUsers()
    let store = TestStore(feature: feature(loaded(all), version: 9))
    await store.send(.push(destination: .userDetail(userId: 2))) {
      $0.path = [.userDetail(userId: 2)]
      $0.shownUser = all[1]
      $0.usersVersion = 9
    }
    await store.send(.push(destination: .userDetail(userId: 404)))
    store.receiveEvents([["type": "toast", "message": "User 404 does not exist."]])
    await store.finish()
  }

  @Test func pushBeforeTheUsersLoadToastsThatTheUserDoesNotExist() async {
    let store = TestStore(feature: feature(UsersFeature.State()))
    await store.send(.push(destination: .userDetail(userId: 2)))
    store.receiveEvents([["type": "toast", "message": "User 2 does not exist."]])
    await store.send(.openURL(url: "app://users/2"))
    store.receiveEvents([
      ["type": "toast", "message": "Cannot open user 2: the users are not loaded yet."]
    ])
    #expect(store.state.path.isEmpty)
    await store.finish()
  }

  @Test func openURLPushesAnExistingUserOnce() async {
    let all = await sampleUsers()
    let store = TestStore(feature: feature(loaded(all)))
    await store.send(.openURL(url: "app://users/7")) {
      $0.path = [.userDetail(userId: 7)]
      $0.shownUser = all[6]
      $0.usersVersion = 4
    }
    await store.send(.openURL(url: "app://users/7"))  // already showing it: no second screen
    await store.finish()
  }

  @Test func unknownOrMalformedURLsToastAndKeepThePath() async {
    let store = TestStore(
      feature: feature(loaded(await sampleUsers())),
      initialState: NavigationFeature.State(path: [.settings]))
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

  @Test func pushPopAndPopToRootReadTheTopScreensUser() async {
    let all = await sampleUsers()
    let store = TestStore(feature: feature(loaded(all)))
    await store.send(.push(destination: .userDetail(userId: 3))) {
      $0.path = [.userDetail(userId: 3)]
      $0.shownUser = all[2]
      $0.usersVersion = 4
    }
    await store.send(.push(destination: .settings)) {
      $0.path.append(.settings)
      $0.shownUser = nil
      $0.usersVersion = nil
    }
    await store.send(.pop) {
      $0.path.removeLast()
      $0.shownUser = all[2]
      $0.usersVersion = 4
    }
    await store.send(.popToRoot) {
      $0.path = []
      $0.shownUser = nil
      $0.usersVersion = nil
    }
    await store.send(.pop)  // empty: nothing to pop
    await store.finish()
  }

  @Test func anUnboundHandleReadsNothingAndTheDeepLinkSaysWhy() async {
    let store = TestStore(feature: NavigationFeature())
    await store.send(.openURL(url: "app://users/1"))
    store.receiveEvents([
      ["type": "toast", "message": "Cannot open user 1: the users store is not open."]
    ])
    await store.finish()
  }

  /// The regression of issue 30: the stack kept its own copy of the users, so after `users`
  /// loaded, `push userDetail 2` toasted "User 2 does not exist".
  @Test func aBoundHandleReadsTheUsersStoreAsItIsNow() async throws {
    let users = Store(
      feature: UsersFeature(
        backend: Backend(latencyMs: 0, clock: clock), clock: clock, wallClock: fixedWallClock))
    defer { users.close() }
    let feature = NavigationFeature()
    let dependency = try #require(feature.dependencies.first)
    #expect(dependency.storeID == "users" && dependency.featureName == "users")
    dependency.bind { id in id == "users" ? users : nil }
    let navigation = Store(feature: feature)
    defer { navigation.close() }

    users.send(.internal(.loaded(users: await sampleUsers(), source: .network)))
    navigation.send(.push(destination: .userDetail(userId: 2)))
    #expect(navigation.state.path == [.userDetail(userId: 2)])
    #expect(navigation.state.usersVersion == users.version)

    users.send(.internal(.serverChanged(user: User(id: 2, name: "Zed", email: "z@x", version: 2))))
    navigation.send(.pop)
    navigation.send(.push(destination: .userDetail(userId: 2)))
    #expect(navigation.state.shownUser?.name == "Zed")
    #expect(navigation.state.usersVersion == users.version)
  }

  @Test func theDescriptorDeclaresTheUsersStore() {
    let descriptor = NavigationFeature().descriptor()
    #expect(descriptor.dependencies.map(\.storeID) == ["users"])
    #expect(CounterFeature(clock: clock).descriptor().dependencies.isEmpty)
  }

  @Test func aDestinationThatDoesNotDecodeIsRefused() {
    let refusals = TestStore(feature: feature(UsersFeature.State()))
    refusals.send(
      wire: ["type": "push", "destination": ["screen": "moon"]], refusedWith: -32602,
      pointer: "/destination/screen")
  }
}

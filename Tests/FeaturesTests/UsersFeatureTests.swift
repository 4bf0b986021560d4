import Features
import JSON
import StateKit
import StateKitTesting
import Testing

@StateActor
@Suite struct UsersFeatureTests {
  let clock = TestClock()

  func feature(_ backend: Backend) -> UsersFeature {
    UsersFeature(backend: backend, clock: clock, wallClock: fixedWallClock)
  }

  func loadedState(_ users: [User]) -> UsersFeature.State {
    let list = IdentifiedArray(users)
    return UsersFeature.State(
      load: LoadState(status: .loaded, lastUpdated: fixedTimestamp), users: list, results: list)
  }

  @Test func loadShowsTheBackendsUsers() async {
    let users = await sampleUsers()
    let backend = testBackend(clock: clock)
    let store = TestStore(feature: feature(backend))
    await store.send(.load) { $0.load.status = .loading }
    await clock.advance(by: .milliseconds(50))
    await store.receive(.internal(.loaded(users: users, source: .network))) {
      $0.load = freshLoad
      $0.source = .network
      $0.users = IdentifiedArray(users)
      $0.results = IdentifiedArray(users)
    }
    await store.send(.load)  // already loaded from the network, and fresh: nothing to do
    #expect(await backend.currentStatus.requests == ["listUsers": 1])  // no fallback
    await store.expireList(on: clock)
    await store.finish()
  }

  @Test func aFailedLoadIsRetriedThreeTimesThenFailsRecoverablyKeepingStaleUsers() async {
    let users = Array(await sampleUsers().prefix(3))
    let backend = testBackend(clock: clock, failRate: 1)  // the fallback fails too
    let store = TestStore(feature: feature(backend), initialState: loadedState(users))
    await store.send(.refresh) { $0.load.status = .loading }
    await clock.run(until: store)
    await store.receive(
      .internal(.loadFailed(message: "Could not load users. Please try again.", recoverable: true))
    ) {
      $0.load.status = .failed
      $0.load.error = LoadState.Failure(
        message: "Could not load users. Please try again.", recoverable: true)
      $0.load.isStale = true
    }
    #expect(await backend.currentStatus.requests["listUsers"] == 4)
    #expect(await backend.currentStatus.requests["listUsersFallback"] == 1)
    // 4 primary attempts of 50 ms, waits of 200 + 400 + 800 ms, 50 ms for the fallback.
    #expect(clock.now.offset == .milliseconds(1_650))
    await store.finish()
  }

  @Test func retryAfterAFailureLoadsAgain() async {
    let users = await sampleUsers()
    let backend = testBackend(clock: clock)
    var failed = UsersFeature.State()
    failed.load = LoadState(
      status: .failed, error: LoadState.Failure(message: "x", recoverable: true))
    let store = TestStore(feature: feature(backend), initialState: failed)
    await store.send(.retry) {
      $0.load.status = .loading
      $0.load.error = nil
    }
    await clock.advance(by: .milliseconds(50))
    await store.receive(.internal(.loaded(users: users, source: .network))) {
      $0.load = freshLoad
      $0.source = .network
      $0.users = IdentifiedArray(users)
      $0.results = IdentifiedArray(users)
    }
    await store.send(.retry)  // not failed: nothing to retry
    await store.expireList(on: clock)
    await store.finish()
  }

  @Test func anEmptyListIsLoadedNotFailed() async {
    let store = TestStore(feature: feature(testBackend(clock: clock)))
    await store.send(.internal(.loaded(users: [], source: .network))) {
      $0.load = freshLoad
      $0.source = .network
    }
    await store.expireList(on: clock)
    await store.finish()
  }

  @Test func refreshCancelsTheLoadInFlight() async {
    let users = await sampleUsers()
    let backend = testBackend(clock: clock)
    let store = TestStore(feature: feature(backend))
    await store.send(.load) { $0.load.status = .loading }
    await clock.advance(by: .milliseconds(30))
    await store.send(.refresh)
    await clock.advance(by: .milliseconds(100))
    // One answer only: the first load was cancelled mid-flight.
    await store.receive(.internal(.loaded(users: users, source: .network))) {
      $0.load = freshLoad
      $0.source = .network
      $0.users = IdentifiedArray(users)
      $0.results = IdentifiedArray(users)
    }
    #expect(await backend.currentStatus.requests["listUsers"] == 2)
    await store.expireList(on: clock)
    await store.finish()
  }

  @Test func searchIsDebouncedAndSendsOneRequest() async {
    let users = await sampleUsers()
    let backend = testBackend(clock: clock)
    let store = TestStore(feature: feature(backend), initialState: loadedState(users))
    await store.send(.search(query: "c")) {
      $0.query = "c"
      $0.searching = true
    }
    await clock.advance(by: .milliseconds(200))
    await store.send(.search(query: "ca")) { $0.query = "ca" }
    await clock.advance(by: .milliseconds(200))
    await store.send(.search(query: "carla")) { $0.query = "carla" }
    await clock.advance(by: .milliseconds(299))
    #expect(await backend.currentStatus.requests["searchUsers"] == nil)
    await clock.advance(by: .milliseconds(1 + 50))
    let carlas = users.filter { $0.matches("carla") }
    await store.receive(.internal(.searchAnswered(query: "carla", users: carlas))) {
      $0.searching = false
      $0.results = IdentifiedArray(carlas)
    }
    #expect(await backend.currentStatus.requests["searchUsers"] == 1)
    await store.finish()
  }

  @Test func aSlowReplyForAnOlderQueryNeverLands() async {
    let users = await sampleUsers()
    let backend = Backend(latencyMs: 1000, clock: clock)
    let store = TestStore(feature: feature(backend), initialState: loadedState(users))
    await store.send(.search(query: "ca")) {
      $0.query = "ca"
      $0.searching = true
    }
    await clock.advance(by: .milliseconds(300))  // "ca" is now in flight for 1 s
    await store.send(.search(query: "callum")) { $0.query = "callum" }
    await clock.run(until: store)
    let callums = users.filter { $0.matches("callum") }
    await store.receive(.internal(.searchAnswered(query: "callum", users: callums))) {
      $0.searching = false
      $0.results = IdentifiedArray(callums)
    }
    #expect(await backend.currentStatus.requests["searchUsers"] == 2)
    // And a reply that somehow still arrives for the old query changes nothing.
    await store.send(.internal(.searchAnswered(query: "ca", users: users)))
    await store.finish()
  }

  @Test func anEmptyQueryShowsAllUsersAndCancelsThePendingSearch() async {
    let users = await sampleUsers()
    let backend = testBackend(clock: clock)
    var searched = loadedState(users)
    searched.query = "ada"
    searched.results = IdentifiedArray(users.filter { $0.matches("ada") })
    let store = TestStore(feature: feature(backend), initialState: searched)
    await store.send(.search(query: "adam")) {
      $0.query = "adam"
      $0.searching = true
    }
    await store.send(.search(query: "  ")) {
      $0.query = "  "
      $0.searching = false
      $0.results = IdentifiedArray(users)
    }
    await clock.run(until: store)
    #expect(await backend.currentStatus.requests["searchUsers"] == nil)
    await store.finish()
  }

  @Test func aFailedSearchFallsBackToTheLoadedUsers() async {
    let users = await sampleUsers()
    let backend = testBackend(clock: clock, failRate: 1)
    let store = TestStore(feature: feature(backend), initialState: loadedState(users))
    await store.send(.search(query: "rossi")) {
      $0.query = "rossi"
      $0.searching = true
    }
    await clock.run(until: store)
    await store.receive(.internal(.searchFailed(query: "rossi"))) {
      $0.searching = false
      $0.results = IdentifiedArray(users.filter { $0.matches("rossi") })
    }
    await store.finish()
  }

  @Test func selectingAnUnknownIdLeavesSelectedNull() async {
    let users = await sampleUsers()
    let feature = feature(testBackend(clock: clock))
    let store = TestStore(feature: feature, initialState: loadedState(users))
    await store.send(.select(id: 42)) { $0.selectedId = 42 }
    #expect(feature.view(of: store.state).selected?.id == 42)
    await store.send(.select(id: 999)) { $0.selectedId = nil }
    #expect(feature.view(of: store.state).selected == nil)
    await store.send(.select(id: 7)) { $0.selectedId = 7 }
    await store.send(.deselect) { $0.selectedId = nil }
    await store.finish()
  }

  @Test func deleteUpdatesUsersResultsAndSelectionTogether() async {
    let users = await sampleUsers()
    let backend = testBackend(clock: clock)
    var state = loadedState(users)
    state.query = "a"
    state.results = IdentifiedArray(users.filter { $0.matches("a") })
    state.selectedId = 1
    let store = TestStore(feature: feature(backend), initialState: state)
    await store.send(.delete(id: 1)) {
      $0.users.remove(id: 1)
      $0.results.remove(id: 1)
      $0.selectedId = nil
    }
    await clock.run(until: store)
    #expect(await backend.currentStatus.requests["deleteUser"] == 1)
    await store.finish()
  }

  @Test func theViewIsNullSafeOnTheWire() {
    let store = Store(feature: feature(testBackend(clock: clock)))
    defer { store.close() }
    #expect(store.published["selected"] == .null)
    #expect(store.published["selectedId"] == .null)
    #expect(store.published["load"]?["error"] == .null)
    #expect(store.published["load"]?["status"] == "idle")
  }
}

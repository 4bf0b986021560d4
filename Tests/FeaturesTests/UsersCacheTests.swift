import Features
import JSON
import StateKit
import StateKitTesting
import Testing

/// Rules 1 and 2 of the users feature: start from the cache and revalidate it, and fall back
/// to the second endpoint before giving up.
@StateActor
@Suite struct UsersCacheTests {
  let clock = TestClock()
  let wall = MovableWallClock()

  func feature(_ backend: Backend, timeToLive: Duration = .seconds(300)) -> UsersFeature {
    UsersFeature(
      backend: backend, clock: clock, wallClock: wall.wallClock, timeToLive: timeToLive)
  }

  /// A list read back from the cache of an earlier run, fetched at `fixedTimestamp`.
  func cached(_ users: [User]) -> UsersFeature.State {
    let list = IdentifiedArray(users)
    return UsersFeature.State(load: freshLoad, source: .cache, users: list, results: list)
  }

  @Test func aSavedStateComesBackAsTheCacheWithNothingInFlight() throws {
    var saved = UsersFeature.State(
      load: LoadState(status: .loading, lastUpdated: fixedTimestamp), source: .network,
      users: [User(id: 1, name: "Ada Abara", email: "ada@example.com")], searching: true,
      edits: [UserEdit(id: 1, name: "Ada L", baseVersion: 1, status: .sending)])
    let snapshot = try JSONValueEncoder().encode(saved)
    let store = try Store(
      feature: feature(testBackend(clock: clock)), id: "users", initial: nil,
      restoring: (snapshot, 4))
    defer { store.close() }
    saved.load.status = .loaded
    saved.source = .cache
    saved.searching = false
    saved.edits[id: 1]?.status = .pending
    #expect(store.state == saved)
    #expect(store.version == 5)  // another state than the one saved, so another version
  }

  @Test func aRestoredListIsStaleOnceOlderThanItsTimeToLive() async {
    let users = Array(await sampleUsers().prefix(3))
    let store = TestStore(
      feature: feature(testBackend(clock: clock), timeToLive: .seconds(60)),
      initialState: cached(users))
    wall.advance(bySeconds: 59)
    await store.send(.internal(.restored)) {
      $0.load.expiresAt = fixedTimestamp.addingTimeInterval(60)
    }
    wall.advance(bySeconds: 1)
    await store.send(.internal(.restored)) { $0.load.isStale = true }
    await store.finish()
  }

  @Test func loadRevalidatesACachedListWithoutBlankingIt() async {
    let all = await sampleUsers()
    var old = Array(all.prefix(3))
    old[0].name = "Renamed Since"
    let backend = testBackend(clock: clock)
    let store = TestStore(feature: feature(backend), initialState: cached(old))
    // The cached list stays on screen, answered at once, while the network is asked.
    await store.send(.load) { $0.load.status = .loading }
    await clock.advance(by: .milliseconds(50))
    await store.receive(.internal(.loaded(users: all, source: .network))) {
      $0.load = freshLoad
      $0.source = .network
      $0.users = IdentifiedArray(all)
      $0.results = IdentifiedArray(all)
    }
    #expect(await backend.currentStatus.requests == ["listUsers": 1])
    await store.expireList(on: clock)
    await store.finish()
  }

  @Test func aFreshListIsNotReloadedButAnExpiredOneIs() async {
    let all = await sampleUsers()
    let backend = testBackend(clock: clock)
    let list = IdentifiedArray(all)
    let loaded = UsersFeature.State(
      load: LoadState(
        status: .loaded, lastUpdated: fixedTimestamp,
        expiresAt: fixedTimestamp.addingTimeInterval(60)),
      source: .network, users: list, results: list)
    let store = TestStore(
      feature: feature(backend, timeToLive: .seconds(60)), initialState: loaded)
    wall.advance(bySeconds: 59)
    await store.send(.load)  // fresh for another second
    wall.advance(bySeconds: 1)
    await store.send(.load) {
      $0.load.isStale = true
      $0.load.status = .loading
    }
    await clock.advance(by: .milliseconds(50))
    await store.receive(.internal(.loaded(users: all, source: .network))) {
      $0.load = LoadState(
        status: .loaded, lastUpdated: fixedTimestamp.addingTimeInterval(60),
        expiresAt: fixedTimestamp.addingTimeInterval(120))
    }
    #expect(await backend.currentStatus.requests == ["listUsers": 1])
    await store.expireList(on: clock, after: .seconds(60))
    await store.finish()
  }

  @Test func theRegisteredStoreChecksARestoredListBeforeItsFirstAnswer() throws {
    let backend = testBackend(clock: clock)
    let descriptors = Features.all(
      backend: backend, clock: clock, wallClock: wall.wallClock, usersTimeToLive: .seconds(60))
    let descriptor = try #require(descriptors.first { $0.name == "users" })
    #expect(descriptor.isPersistent)
    let users: IdentifiedArray<User> = [User(id: 1, name: "Ada Abara", email: "ada@example.com")]
    let saved = UsersFeature.State(load: freshLoad, source: .network, users: users)
    wall.advance(bySeconds: 120)
    let store = try descriptor.makeStore(
      "users", nil, (try JSONValueEncoder().encode(saved), 4))
    defer { store.close() }
    #expect(store.published["source"] == "cache")
    #expect(store.published["users"]?[0]?["name"] == "Ada Abara")
    #expect(store.published["load"]?["isStale"] == true)
    #expect(store.published["load"]?["expiresAt"] == "2027-01-15T08:01:00.000Z")
    #expect(store.version == 6)  // decoded as the cache (5), then checked against the TTL (6)
  }

  @Test func whenThePrimaryFailsItsRetriesTheFallbackServes() async {
    let all = await sampleUsers()
    let backend = Backend(seed: 1, latencyMs: 50, failRate: 1, fallbackFailRate: 0, clock: clock)
    let store = TestStore(feature: feature(backend))
    await store.send(.load) { $0.load.status = .loading }
    await clock.advance(by: .milliseconds(1_650))
    await store.receive(.internal(.loaded(users: all, source: .fallback))) {
      $0.load = freshLoad
      $0.source = .fallback
      $0.users = IdentifiedArray(all)
      $0.results = IdentifiedArray(all)
    }
    #expect(await backend.currentStatus.requests == ["listUsers": 4, "listUsersFallback": 1])
    // 4 primary attempts of 50 ms, waits of 200 + 400 + 800 ms, 50 ms for the fallback.
    #expect(clock.now.offset == .milliseconds(1_650))
    await store.expireList(on: clock)
    await store.finish()
  }

  @Test func whenBothFailTheLastGoodListStaysWithARecoverableMessage() async {
    let users = Array(await sampleUsers().prefix(3))
    let backend = testBackend(clock: clock)
    await backend.setOnline(false)
    await backend.setFallbackOnline(false)
    let store = TestStore(feature: feature(backend), initialState: cached(users))
    await store.send(.load) { $0.load.status = .loading }
    await clock.run(until: store)
    let message = "You appear to be offline. Check your connection and try again."
    await store.receive(.internal(.loadFailed(message: message, recoverable: true))) {
      $0.load.status = .failed
      $0.load.error = LoadState.Failure(message: message, recoverable: true)
      $0.load.isStale = true
    }
    #expect(store.state.source == .cache && store.state.users.count == 3)
    #expect(await backend.currentStatus.requests == [:])  // offline calls never arrive

    await backend.setFallbackOnline(true)
    await store.send(.retry) {
      $0.load.status = .loading
      $0.load.error = nil
    }
    await clock.run(until: store)
    let all = await sampleUsers()
    await store.receive(.internal(.loaded(users: all, source: .fallback))) {
      $0.load = freshLoad
      $0.source = .fallback
      $0.users = IdentifiedArray(all)
      $0.results = IdentifiedArray(all)
    }
    await store.receive(.internal(.expired)) { $0.load.isStale = true }  // run went past it
    await store.finish()
  }
}

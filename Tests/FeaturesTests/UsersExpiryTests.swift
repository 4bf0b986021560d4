import Features
import StateKit
import StateKitTesting
import Testing

/// Issue 30: `isStale` follows the list's age, not only failures. A load sets a timer on the
/// feature's clock for `expiresAt`; when it fires the list is marked stale, with no `load` or
/// restart needed to notice.
@StateActor
@Suite struct UsersExpiryTests {
  let clock = TestClock()

  func feature(_ backend: Backend, timeToLive: Duration = .seconds(300)) -> UsersFeature {
    UsersFeature(
      backend: backend, clock: clock, wallClock: fixedWallClock, timeToLive: timeToLive)
  }

  func load(_ store: TestStore<UsersFeature>, _ users: [User]) async {
    await store.send(.load) { $0.load.status = .loading }
    await clock.advance(by: .milliseconds(50))
    await store.receive(.internal(.loaded(users: users, source: .network))) {
      $0.load = freshLoad
      $0.source = .network
      $0.users = IdentifiedArray(users)
      $0.results = IdentifiedArray(users)
    }
  }

  @Test func aLoadedListTurnsStaleWhenItsTimeToLivePasses() async {
    let users = await sampleUsers()
    let store = TestStore(feature: feature(testBackend(clock: clock)))
    await load(store, users)
    await clock.advance(by: .seconds(300) - .milliseconds(1))
    #expect(store.state.load.isStale == false)  // a millisecond early: still fresh
    await store.expireList(on: clock, after: .milliseconds(1))
    // Stale now, so `load` revalidates it, keeping it on screen.
    await store.send(.load) { $0.load.status = .loading }
    await clock.advance(by: .milliseconds(50))
    await store.receive(.internal(.loaded(users: users, source: .network))) {
      $0.load = freshLoad
    }
    await store.expireList(on: clock)
    await store.finish()
  }

  @Test func eachLoadRestartsTheTimer() async {
    let users = await sampleUsers()
    let store = TestStore(feature: feature(testBackend(clock: clock)))
    await load(store, users)
    await clock.advance(by: .seconds(200))
    await store.send(.refresh) { $0.load.status = .loading }
    await clock.advance(by: .milliseconds(50))
    await store.receive(.internal(.loaded(users: users, source: .network))) {
      $0.load = freshLoad
    }
    await clock.advance(by: .seconds(299))  // 499 s after the first load: its timer is gone
    #expect(store.state.load.isStale == false)
    await store.expireList(on: clock, after: .seconds(1))
    await store.finish()
  }

  @Test func aRestoredListExpiresWhenItsTimeComes() async {
    let users = IdentifiedArray(Array(await sampleUsers().prefix(3)))
    let cached = UsersFeature.State(
      load: LoadState(status: .loaded, lastUpdated: fixedTimestamp), source: .cache,
      users: users, results: users)
    let store = TestStore(
      feature: feature(testBackend(clock: clock), timeToLive: .seconds(60)),
      initialState: cached)
    await store.send(.internal(.restored)) {
      $0.load.expiresAt = fixedTimestamp.addingTimeInterval(60)
    }
    await store.expireList(on: clock, after: .seconds(60))
    await store.finish()
  }

  @Test func theTimerIsABackgroundEffectThatASettledLoadDoesNotWaitFor() async {
    let store = TestStore(feature: feature(testBackend(clock: clock)))
    let load = await store.send(.load) { $0.load.status = .loading }
    await clock.advance(by: .milliseconds(50))
    let users = await sampleUsers()
    await store.receive(.internal(.loaded(users: users, source: .network))) {
      $0.load = freshLoad
      $0.source = .network
      $0.users = IdentifiedArray(users)
      $0.results = IdentifiedArray(users)
    }
    // The load's own effects are done: `settled` answers, though the timer still runs.
    #expect(!load.isRunning)
    #expect(store.store.inFlightEffectCount == 1)
    await load.finish()
    await store.expireList(on: clock)
    await store.finish()
  }
}

import JSON
import StateKit
@_spi(Testing) import StateKitTesting
import Testing

/// `TestStore` itself: it passes what is right and fails, readably, on what is not.
@StateActor
@Suite struct TestStoreTests {

  // The tests of failures catch them through `failureHandler` and check their text and line,
  // so a deliberate failure neither fails the run nor shows as a "known issue".

  @Test func aWrongStateAssertionFailsShowingTheField() async {
    let failures = Failures()
    let store = TestStore(feature: Counter())
    store.failureHandler = failures.record
    await store.send(.increment) { $0.count = 2 }
    let line = #line - 1
    #expect(failures.messages.count == 1)
    #expect(failures.messages.first?.contains("/count: expected 2, actual 1") == true)
    #expect(failures.lines == [line])
  }

  @Test func aChangeTheTestDidNotDescribeFails() async {
    let failures = Failures()
    let store = TestStore(feature: Counter())
    store.failureHandler = failures.record
    await store.send(.increment)
    #expect(failures.messages.first?.contains("/count: expected 0, actual 1") == true)
  }

  @Test func anUnreceivedActionFailsAtFinish() async {
    let clock = TestClock()
    let backend = ListBackend(clock: clock, script: [.success(["a"])])
    let failures = Failures()
    let store = TestStore(feature: Loader(backend: backend, clock: clock))
    store.failureHandler = failures.record
    await store.send(.load) { $0.load = .loading }
    await clock.advance(by: .seconds(1))
    await store.finish()
    #expect(
      failures.messages == [
        #"1 action(s) received but not asserted: internal(StateKitTests.Loader.Action.Internal.loaded(items: ["a"]))"#
      ])
  }

  @Test func anEffectStillRunningFailsAtFinish() async {
    let clock = TestClock()
    let failures = Failures()
    // The default 30 s timeout: finish fails at once all the same, since the ticker sleeps on
    // the test clock and nothing else can wake it.
    let store = TestStore(feature: Board(clock: clock))
    store.failureHandler = failures.record
    await store.send(.add(id: 1)) { $0.tickers.append(Ticker.State(id: 1)) }
    await store.send(.ticker(id: 1, action: .start))
    let started = ContinuousClock.now
    await store.finish()
    #expect(failures.messages.count == 1)
    #expect(failures.messages.first?.contains("1 effect(s) still running") == true)
    #expect(ContinuousClock.now - started < .seconds(25))
    store.store.close()
  }

  @Test func receivingTheWrongActionFails() async {
    let clock = TestClock()
    let backend = ListBackend(clock: clock, script: [.success(["a"])])
    let failures = Failures()
    let store = TestStore(feature: Loader(backend: backend, clock: clock))
    store.failureHandler = failures.record
    await store.send(.load) { $0.load = .loading }
    await clock.advance(by: .seconds(1))
    await store.receive(.internal(.failed))
    #expect(
      failures.messages.first
        == #"Received internal(StateKitTests.Loader.Action.Internal.loaded(items: ["a"])), "#
        + "expected internal(StateKitTests.Loader.Action.Internal.failed)")
  }

  @Test func nonExhaustiveModeChecksOnlyWhatIsAsserted() async {
    let clock = TestClock()
    let backend = ListBackend(clock: clock, script: [.failure(BackendError())])
    let store = TestStore(
      feature: Loader(backend: backend, clock: clock), exhaustivity: .off)
    await store.send(.load)
    await clock.run()
    // The retries are skipped; only the final state is asserted, and only in part.
    await store.receive(.internal(.failed)) { $0.isStale = false }
    await store.finish()
    #expect(store.state.load == .failed(message: Loader.failureMessage, recoverable: true))

    let failures = Failures()
    let other = TestStore(feature: Counter(), exhaustivity: .off)
    other.failureHandler = failures.record
    await other.send(.increment) { $0.count = 5 }
    #expect(failures.messages.first?.contains("/count: expected 5, actual 1") == true)
  }

  @Test func eventsAreAssertedInOrder() async {
    let store = TestStore(feature: Counter())
    await store.send(.set(value: 9)) { $0.count = 9 }
    await store.send(.increment) { $0.count = 10 }
    store.receiveEvents([["type": "milestone", "count": 10]])
    await store.finish()
  }

  @Test func anEmbeddedChildRunsWithItsEventsLiftedIntoTheParent() async {
    let store = TestStore(feature: Board(clock: TestClock()))
    await store.send(.counter(action: .set(value: 9))) { $0.counter.count = 9 }
    await store.send(.counter(action: .increment)) { $0.counter.count = 10 }
    store.receiveEvents([["type": "counter", "event": ["milestone": ["count": 10]]]])
    await store.finish()
  }
}

/// The failures a `TestStore` reported, caught instead of recorded.
@StateActor
final class Failures {
  private(set) var messages: [String] = []
  private(set) var lines: [Int] = []
  private(set) var files: [String] = []

  func record(_ message: String, at location: SourceLocation) {
    messages.append(message)
    lines.append(location.line)
    files.append(location.fileID)
  }
}

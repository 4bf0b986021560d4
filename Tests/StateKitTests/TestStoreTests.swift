import JSON
import StateKit
import StateKitTesting
import Testing

/// `TestStore` itself: it passes what is right and fails, readably, on what is not.
@MainActor
@Suite struct TestStoreTests {

  @Test func aWrongStateAssertionFailsShowingTheField() async {
    await withKnownIssue {
      let store = TestStore(feature: Counter())
      await store.send(.increment) { $0.count = 2 }
    } matching: { issue in
      comments(issue).contains("/count: expected 2, actual 1")
    }
  }

  @Test func aChangeTheTestDidNotDescribeFails() async {
    await withKnownIssue {
      let store = TestStore(feature: Counter())
      await store.send(.increment)
    } matching: { issue in
      comments(issue).contains("/count: expected 0, actual 1")
    }
  }

  @Test func anUnreceivedActionFailsAtFinish() async {
    let clock = TestClock()
    let backend = ListBackend(clock: clock, script: [.success(["a"])])
    await withKnownIssue {
      let store = TestStore(feature: Loader(backend: backend, clock: clock))
      await store.send(.load) { $0.load = .loading }
      await clock.advance(by: .seconds(1))
      await store.finish()
    } matching: { issue in
      comments(issue).contains("received but not asserted: loaded(items: [\"a\"])")
    }
  }

  @Test func anEffectStillRunningFailsAtFinish() async {
    let clock = TestClock()
    await withKnownIssue {
      let store = TestStore(feature: Board(clock: clock))
      store.timeout = .milliseconds(50)
      await store.send(.add(id: 1)) { $0.tickers.append(Ticker.State(id: 1)) }
      await store.send(.ticker(id: 1, action: .start))
      await store.finish()
    } matching: { issue in
      comments(issue).contains("1 effect(s) still running")
    }
  }

  @Test func receivingTheWrongActionFails() async {
    let clock = TestClock()
    let backend = ListBackend(clock: clock, script: [.success(["a"])])
    await withKnownIssue {
      let store = TestStore(feature: Loader(backend: backend, clock: clock))
      await store.send(.load) { $0.load = .loading }
      await clock.advance(by: .seconds(1))
      await store.receive(.failed)
    } matching: { issue in
      comments(issue).contains("Received loaded(items: [\"a\"]), expected failed")
    }
  }

  @Test func nonExhaustiveModeChecksOnlyWhatIsAsserted() async {
    let clock = TestClock()
    let backend = ListBackend(clock: clock, script: [.failure(BackendError())])
    let store = TestStore(
      feature: Loader(backend: backend, clock: clock), exhaustivity: .off)
    await store.send(.load)
    await clock.run()
    // The retries are skipped; only the final state is asserted, and only in part.
    await store.receive(.failed) { $0.isStale = false }
    await store.finish()
    #expect(store.state.load == .failed(message: Loader.failureMessage, recoverable: true))

    await withKnownIssue {
      let other = TestStore(feature: Counter(), exhaustivity: .off)
      await other.send(.increment) { $0.count = 5 }
    }
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

/// The text of an issue's comments, for matching known issues.
private func comments(_ issue: Issue) -> String {
  issue.comments.map(\.rawValue).joined(separator: "\n")
}

import JSON
import StateKit
@_spi(Testing) import StateKitTesting
import Testing

/// The typed test kit: typed events, wire sends and refusals, failing fast when nothing can
/// progress.
@StateActor
@Suite struct TestStoreKitTests {
  @Test func eventsAreReceivedAsTypedValues() async {
    let store = TestStore(feature: Counter(), initialState: Counter.State(count: 9))
    await store.send(.increment) { $0.count = 10 }
    await store.receive(event: .milestone(count: 10))
    await store.finish()
  }

  @Test func theWrongTypedEventFailsNamingBoth() async {
    let failures = Failures()
    let store = TestStore(feature: Counter(), initialState: Counter.State(count: 9))
    store.failureHandler = failures.record
    await store.send(.increment) { $0.count = 10 }
    await store.receive(event: .milestone(count: 20))
    #expect(
      failures.messages == ["Expected the event milestone(count: 20), got milestone(count: 10)"])
  }

  @Test func aWireActionIsDecodedValidatedAndReduced() async {
    let store = TestStore(feature: Counter())
    await store.send(wire: ["type": "set", "value": 4]) { $0.count = 4 }
    await store.finish()
  }

  @Test func wireRefusalsAreCheckedByCodeAndPointer() {
    let store = TestStore(feature: Counter())
    store.send(wire: ["type": "reset"], refusedWith: -32003)
    store.send(wire: ["type": "set", "value": -1], refusedWith: -32602, pointer: "/value")
    store.send(wire: ["type": "set", "value": "x"], refusedWith: -32602, pointer: "/value")
  }

  @Test func aRefusalWithAnotherPointerFails() {
    let failures = Failures()
    let store = TestStore(feature: Counter())
    store.failureHandler = failures.record
    store.send(wire: ["type": "set", "value": -1], refusedWith: -32602, pointer: "/count")
    store.send(wire: ["type": "increment"], refusedWith: -32003)
    #expect(failures.messages.count == 2)
    #expect(failures.messages.first?.contains("got -32602 at /value") == true)
    #expect(failures.messages.last?.contains("but it was reduced") == true)
  }

  @Test func oneAdvanceWakesEverySleeperDueHoweverMany() async {
    let clock = TestClock()
    let store = TestStore(feature: Board(clock: clock))
    for id in 1...3 {
      await store.send(.add(id: id)) { $0.tickers.append(Ticker.State(id: id)) }
      await store.send(.ticker(id: id, action: .start))
    }
    // Three tickers, two seconds: six ticks from one call, without telling it how many sleep.
    await clock.advance(by: .seconds(2))
    for _ in 1...2 {
      for id in 1...3 {
        await store.receive(.ticker(id: id, action: .internal(.tick))) {
          $0.tickers.modify(id: id) { $0.ticks += 1 }
        }
      }
    }
    await store.send(.remove(id: 1)) { _ = $0.tickers.remove(id: 1) }
    await store.send(.remove(id: 2)) { _ = $0.tickers.remove(id: 2) }
    await store.send(.remove(id: 3)) { _ = $0.tickers.remove(id: 3) }
    await store.finish()
  }

  @Test func aSendsEffectsAreCancelledThroughItsHandle() async {
    let clock = TestClock()
    let store = TestStore(feature: Board(clock: clock))
    await store.send(.add(id: 1)) { $0.tickers.append(Ticker.State(id: 1)) }
    let ticking = await store.send(.ticker(id: 1, action: .start))
    #expect(ticking.isRunning)
    await clock.advance(by: .seconds(1))
    await store.receive(.ticker(id: 1, action: .internal(.tick))) {
      $0.tickers.modify(id: 1) { $0.ticks = 1 }
    }
    await ticking.cancel()
    #expect(!ticking.isRunning)
    await store.finish()
  }

  @Test func awaitingASendsEffectsFailsAtOnceWhenTheyOnlySleep() async {
    let failures = Failures()
    let clock = TestClock()
    let store = TestStore(feature: Board(clock: clock))
    store.failureHandler = failures.record
    await store.send(.add(id: 1)) { $0.tickers.append(Ticker.State(id: 1)) }
    let ticking = await store.send(.ticker(id: 1, action: .start))
    await ticking.finish()
    #expect(
      failures.messages == [
        "The effects of this send still run, asleep on a test clock: advance the test clock, or "
          + "cancel them."
      ])
    await ticking.cancel()
    await store.finish()
  }

  @Test func receivingWhileEveryEffectSleepsFailsAtOnce() async {
    let failures = Failures()
    let clock = TestClock()
    let store = TestStore(feature: Board(clock: clock))
    store.failureHandler = failures.record
    await store.send(.add(id: 1)) { $0.tickers.append(Ticker.State(id: 1)) }
    await store.send(.ticker(id: 1, action: .start))
    let started = ContinuousClock.now
    await store.receive(.ticker(id: 1, action: .internal(.tick)))
    #expect(ContinuousClock.now - started < .seconds(25))
    #expect(failures.messages.first?.contains("does the test clock need advancing?") == true)
    store.store.close()
  }
}

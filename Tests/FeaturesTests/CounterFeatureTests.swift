import Features
import JSON
import StateKit
import StateKitTesting
import Testing

@StateActor
@Suite struct CounterFeatureTests {
  @Test func incrementDecrementSetAndReset() async {
    let store = TestStore(feature: CounterFeature(clock: TestClock()))
    await store.send(.increment) { $0.count = 1 }
    await store.send(.increment) { $0.count = 2 }
    await store.send(.decrement) { $0.count = 1 }
    await store.send(.set(value: 40)) { $0.count = 40 }
    await store.send(.reset) { $0.count = 0 }
    await store.finish()
  }

  @Test func incrementLaterIncrementsOnlyOnceTheDelayHasPassed() async {
    let clock = TestClock()
    let store = TestStore(feature: CounterFeature(clock: clock))
    await store.send(.incrementLater(afterMs: 500))
    await clock.advance(by: .milliseconds(499))
    #expect(store.state.count == 0)
    await clock.advance(by: .milliseconds(1))
    await store.receive(.increment) { $0.count = 1 }
    await store.finish()
  }

  @Test func aNegativeDelayIsRefusedWithItsPointer() {
    TestStore(feature: CounterFeature(clock: TestClock())).send(
      wire: ["type": "incrementLater", "afterMs": -1], refusedWith: -32602, pointer: "/afterMs")
  }

  @Test func theWireNamesAreTheIssues() {
    #expect(
      CounterFeature.caseNames.publicActions
        == ["increment", "decrement", "set", "reset", "incrementLater"])
    let store = Store(feature: CounterFeature(clock: TestClock()))
    defer { store.close() }
    #expect(throws: Never.self) { try store.send(wire: ["type": "set", "value": 7], cause: nil) }
    #expect(store.published == ["count": 7])
  }

  @Test func theCountSaturatesAtTheBoundsInsteadOfTrapping() async {
    let store = TestStore(feature: CounterFeature(clock: TestClock()))
    await store.send(.set(value: .max)) { $0.count = .max }
    await store.send(.increment)
    await store.send(.set(value: .min)) { $0.count = .min }
    await store.send(.decrement)
    await store.finish()
  }
}

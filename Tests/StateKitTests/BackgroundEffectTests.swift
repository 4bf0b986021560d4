import StateKit
import StateKitTesting
import Testing

/// A feature with a timer set far ahead, run in the background.
private struct Reminder: Feature {
  struct State: Codable, Equatable, Sendable { var due = false }
  enum Action: Codable, Equatable, Sendable { case set, fired }
  static let name = "reminder"
  let clock: TestClock
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .set:
      return .run { [clock] send in
        try await clock.sleep(for: .seconds(300))
        await send(.fired)
      }
      .background()
    case .fired:
      state.due = true
      return .none
    }
  }
}

@StateActor
@Suite struct BackgroundEffectTests {
  @Test func settledAndIdleDoNotWaitForABackgroundTimer() async {
    let clock = TestClock()
    let store = Store(feature: Reminder(clock: clock))
    defer { store.close() }
    let transaction = store.send(.set)
    await store.settleEffects()
    #expect(store.inFlightEffectCount == 1)  // the timer runs...
    #expect(!store.isRunning(transaction))  // ...but the action is settled
    await store.settled(transaction)  // answers at once
    await store.idle()  // so does idle: the drain at shutdown does not wait 5 minutes
    await clock.advance(by: .seconds(300))
    await store.settleEffects()
    #expect(store.state.due)
    #expect(store.inFlightEffectCount == 0)
  }

  @Test func aTestStoreStillExpectsTheTimerToBeDealtWith() async {
    let clock = TestClock()
    let store = TestStore(feature: Reminder(clock: clock))
    await store.send(.set)
    await clock.advance(by: .seconds(300))
    await store.receive(.fired) { $0.due = true }
    await store.finish()
  }
}

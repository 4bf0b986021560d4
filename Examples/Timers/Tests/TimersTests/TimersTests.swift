import StateKit
import StateKitTesting
import Testing
import Timers

@StateActor @Test func aCountdownTicksToZeroAndFinishes() async {
  let clock = TestClock()
  let store = TestStore(feature: Timers(clock: clock))
  await store.send(.start(seconds: 2)) {
    $0.length = 2
    $0.remaining = 2
    $0.running = true
  }
  await clock.advance(by: .seconds(1))
  await store.receive(.internal(.tick)) { $0.remaining = 1 }
  await clock.advance(by: .seconds(1))
  await store.receive(.internal(.tick)) {
    $0.remaining = 0
    $0.running = false
  }
  await store.receive(event: .finished(seconds: 2))
  await store.finish()
}

@StateActor @Test func stopCancelsTheCountdown() async {
  let clock = TestClock()
  let store = TestStore(feature: Timers(clock: clock))
  await store.send(.start(seconds: 5)) {
    $0.length = 5
    $0.remaining = 5
    $0.running = true
  }
  await store.send(.stop) { $0.running = false }
  await clock.advance(by: .seconds(10))
  await store.finish()
}

@Test func everyTypeIsDescribed() {
  #expect(Timers().descriptor().schemaProblems == [])
}

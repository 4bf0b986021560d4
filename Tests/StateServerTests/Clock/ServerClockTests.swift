import JSON
import StateKit
import Synchronization
import Testing

@testable import StateServer

/// ``ServerClock``: in virtual mode a sleep ends only when `advance` moves time past it, and
/// advances requested together move time one after the other.
@Suite struct ServerClockTests {
  @Test func aVirtualSleepEndsOnlyWhenTimeIsAdvancedPastItsDeadline() async {
    let clock = ServerClock(mode: .virtual)
    let woke = Mutex(false)
    let sleeper = Task {
      try? await clock.sleep(for: .milliseconds(300))
      woke.withLock { $0 = true }
    }
    // Not an effect of a store, so no activity tells the clock it sleeps: wait until it does.
    while clock.virtual.sleeperCount == 0 { await Task.yield() }
    await clock.advance(by: .milliseconds(299)) {}
    #expect(woke.withLock { $0 } == false)
    await clock.advance(by: .milliseconds(1)) {}
    await sleeper.value
    #expect(woke.withLock { $0 })
    #expect(clock.now.offset == .milliseconds(300))
  }

  @Test func advancesRequestedTogetherAddUp() async {
    let clock = ServerClock(mode: .virtual)
    async let first: Void = clock.advance(by: .milliseconds(100)) {}
    async let second: Void = clock.advance(by: .milliseconds(50)) {}
    _ = await (first, second)
    #expect(clock.now.offset == .milliseconds(150))
  }

  @Test func theReadingIsInWholeMilliseconds() async {
    let clock = ServerClock(mode: .virtual)
    await clock.advance(by: .milliseconds(1234)) {}
    #expect(Connection.clockReading(clock) == ["clock": "virtual", "now": 1234])
  }

  @Test func realModeFollowsRealTime() {
    let clock = ServerClock()
    #expect(clock.mode == .real)
    #expect(clock.now.offset >= .zero)
    #expect(Connection.clockReading(clock)["clock"] == "real")
  }
}

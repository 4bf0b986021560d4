import Testing

@testable import StateServer

/// The main loop's idle trim: it waits at most `IdleTrim.delay` after activity, trims once per
/// quiet period, then waits without a timeout (an idle server is not woken every second).
@Suite struct IdleTrimTests {
  @Test func waitsForeverUntilSomethingHappens() {
    let trim = IdleTrim()
    #expect(trim.timeout == -1)
  }

  @Test func trimsOnceAfterActivityThenWaitsForeverAgain() {
    var trim = IdleTrim()
    trim.sawActivity()
    #expect(trim.timeout == IdleTrim.delay)
    trim.sawActivity()
    #expect(trim.timeout == IdleTrim.delay)
    trim.idle()
    #expect(trim.timeout == -1)
    // A second quiet wait without activity in between trims nothing and stays untimed.
    trim.idle()
    #expect(trim.timeout == -1)
  }
}

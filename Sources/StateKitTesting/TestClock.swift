import StateKit

/// A clock whose time moves only when a test says so: `advance(by:)` wakes, in deadline
/// order, every sleeper whose deadline has come. No real time passes, so a test of a 300 ms
/// debounce or of a backoff over minutes runs in microseconds.
///
/// ```swift
/// let clock = TestClock()
/// let store = TestStore(feature: Search(clock: clock))
/// await store.send(.queryChanged("ca")) { $0.query = "ca" }
/// await clock.advance(by: .milliseconds(300))
/// await store.receive(.results(["calendar"])) { $0.results = ["calendar"] }
/// ```
///
/// The name tests know for StateKit's ``VirtualClock``: one implementation, so a test's clock
/// and the server's `--clock virtual` cannot drift apart.
public typealias TestClock = VirtualClock

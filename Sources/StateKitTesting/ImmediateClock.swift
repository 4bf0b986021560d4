import StateKit
import Synchronization

/// A clock on which every sleep returns at once (after moving `now` to its deadline): for
/// previews, demos and tests that do not care about time, only about order.
///
/// ```swift
/// let feature = Search(clock: ImmediateClock())   // the debounce fires immediately
/// ```
public final class ImmediateClock: Clock, Sendable {
  /// The same instants as `TestClock`: time elapsed since the clock was made.
  public typealias Instant = TestClock.Instant

  private let current: Mutex<Instant>

  /// A clock starting at `now`.
  public init(now: Instant = Instant()) { current = Mutex(now) }

  /// The current instant: the latest deadline slept until.
  public var now: Instant { current.withLock { $0 } }
  /// Zero: any duration is honoured exactly.
  public var minimumResolution: Duration { .zero }

  /// Returns at once (unless cancelled), moving `now` to `deadline`.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    current.withLock { $0 = max($0, deadline) }
    await Task.yield()
    try Task.checkCancellation()
  }
}

import Synchronization

/// A clock on which every sleep returns at once (after moving `now` to its deadline): for
/// previews, demos and tests that do not care about time, only about order.
///
/// ```swift
/// let feature = Search(clock: ImmediateClock())   // the debounce fires immediately
/// ```
public final class ImmediateClock: Clock, Sendable {
  public typealias Instant = TestClock.Instant

  private let current: Mutex<Instant>

  public init(now: Instant = Instant()) { current = Mutex(now) }

  public var now: Instant { current.withLock { $0 } }
  public var minimumResolution: Duration { .zero }

  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    current.withLock { $0 = max($0, deadline) }
    await Task.yield()
    try Task.checkCancellation()
  }
}

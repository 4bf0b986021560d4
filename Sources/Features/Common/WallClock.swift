import FoundationEssentials
import StateKit

/// Where features read the time of day (for `createdAt`, `lastUpdated`, `lastSyncedAt`):
/// injected like every other dependency, so tests pin it.
///
/// **Replayable reducers.** A reducer reads the time only through this clock, never `Date()`:
/// while a store with history (or a recording) reduces an action, `.system` returns that
/// reduce's stamp (`ReduceTime.current`), which the store keeps in the history entry and
/// replay and time travel set again from the recording. So a reducer that reads
/// `wallClock.timestamp()` twice in one reduce sees the same instant, and replaying it gives
/// the same timestamp to the millisecond. Outside a reduce (in an effect) `.system` is the
/// real clock; an effect that needs the time sends it back in an action, which is recorded.
///
/// ```swift
/// let fixed = WallClock { Date(timeIntervalSince1970: 0) }
/// fixed.timestamp()  // "1970-01-01T00:00:00.000Z"
/// ```
public struct WallClock: Sendable {
  /// The current date and time.
  public var now: @Sendable () -> Date

  /// A wall clock reading `now`.
  public init(now: @escaping @Sendable () -> Date) {
    self.now = now
  }

  /// The system's clock, pinned to the store's stamp while a store with history reduces.
  public static let system = WallClock { ReduceTime.current.map(ReduceTime.date) ?? Date() }

  /// The current time as an ISO 8601 UTC timestamp with milliseconds.
  public func timestamp() -> String {
    now().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
  }
}

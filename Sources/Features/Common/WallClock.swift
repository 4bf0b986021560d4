import FoundationEssentials
import StateKit

/// Where features read the time of day (for `createdAt`, `lastUpdated`, `lastSyncedAt`):
/// injected like every other dependency, so tests pin it. State keeps the `Date`; the wire
/// shows it as ISO 8601 UTC to the millisecond (`2027-01-15T08:00:00.000Z`).
///
/// **Replayable reducers.** A reducer reads the time only through this clock, never `Date()`:
/// while a store with history (or a recording) reduces an action, `.system` returns that
/// reduce's stamp (`ReduceTime.current`), which the store keeps in the history entry and
/// replay and time travel set again from the recording. So a reducer that reads
/// `wallClock.now()` twice in one reduce sees the same instant, and replaying it gives the
/// same date to the millisecond. Outside a reduce (in an effect) `.system` is the real clock;
/// an effect that needs the time sends it back in an action, which is recorded.
///
/// **Whole milliseconds.** `.system` never returns a finer date than the wire shows, so a
/// state written to a snapshot and read back is `==` to the state in memory.
///
/// ```swift
/// let fixed = WallClock { Date(timeIntervalSince1970: 0) }
/// fixed.now()  // 1970-01-01T00:00:00.000Z on the wire
/// ```
public struct WallClock: Sendable {
  /// The current date and time.
  public var now: @Sendable () -> Date

  /// A wall clock reading `now`.
  public init(now: @escaping @Sendable () -> Date) {
    self.now = now
  }

  /// The system's clock in whole milliseconds, pinned to the store's stamp while a store with
  /// history reduces.
  public static let system = WallClock {
    ReduceTime.date(ReduceTime.current ?? milliseconds(Date()))
  }

  /// `date` in whole milliseconds since 1970 (rounded down, as a reduce's stamp is).
  static func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
  }
}

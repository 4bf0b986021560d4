import Foundation

/// Where features read the time of day (for `createdAt`, `lastUpdated`, `lastSyncedAt`):
/// injected like every other dependency, so tests pin it.
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

  /// The system's clock.
  public static let system = WallClock { Date() }

  /// The current time as an ISO 8601 UTC timestamp with milliseconds.
  public func timestamp() -> String {
    now().formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt))
  }
}

import Foundation

/// The time at which the store is reducing the current action, when it records one: what a
/// feature's wall clock must read inside `reduce` so that replay reproduces the reduction.
///
/// A store with history (or a recording) stamps each reduce with the wall-clock time in whole
/// milliseconds, keeps the stamp in the history entry, and binds it here for the duration of
/// `reduce`. Replay and `state(at:)` bind the recorded stamp instead. A feature that needs the
/// time of day reads it through a clock that prefers this stamp (the reference app's
/// `WallClock.system` does), never `Date()` directly:
///
/// ```swift
/// let now = ReduceTime.current.map(ReduceTime.date) ?? Date()
/// ```
///
/// Outside `reduce` (in effects, in tests without history) `current` is nil.
public enum ReduceTime {
  /// Milliseconds since 1970-01-01T00:00:00Z of the reduce under way, or nil.
  @TaskLocal public static var current: Int64?

  /// A stamp as a `Date`, computed the same way wherever it is read, so that a recorded
  /// stamp yields the very same `Date` (and the same formatted timestamp) in replay.
  public static func date(_ milliseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
  }

  /// Now, in whole milliseconds since the epoch.
  static func now() -> Int64 {
    Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
  }
}

import FoundationEssentials
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The time at which the store is reducing the current action, when it records one: what a
/// feature's wall clock must read inside `reduce` so that replay reproduces the reduction.
///
/// A store with history (or a recording) stamps each reduce with the wall-clock time in whole
/// milliseconds, keeps the stamp in the history entry, and sets it here for the duration of
/// `reduce`. Replay and `state(at:)` set the recorded stamp instead. A feature that needs the
/// time of day reads it through a clock that prefers this stamp (the reference app's
/// `WallClock.system` does), never `Date()` directly:
///
/// ```swift
/// let now = ReduceTime.current.map(ReduceTime.date) ?? Date()
/// ```
///
/// Outside `reduce` (in effects, in tests without history) `current` is nil.
public enum ReduceTime {
  /// The stamp, and the thread reducing with it (0: none). Only the thread that set the stamp
  /// sees it: stores reduce on the state actor, and an effect reading its clock on another
  /// thread meanwhile must get the real time. Two atomics rather than a task-local value:
  /// binding a task-local was 2% of a pipelined increment, and history binds twice per action.
  private static let stamp = Atomic<Int64>(0)
  private static let owner = Atomic<UInt>(0)

  /// Milliseconds since 1970-01-01T00:00:00Z of the reduce under way on this thread, or nil.
  public static var current: Int64? {
    // The owner is stored after the stamp (releasing) and read first (acquiring), so the
    // thread that finds itself the owner reads the stamp it set.
    guard owner.load(ordering: .acquiring) == thread() else { return nil }
    return stamp.load(ordering: .relaxed)
  }

  /// Runs `body` with `current` returning `milliseconds` on this thread.
  public static func reducing<Result>(at milliseconds: Int64, _ body: () -> Result) -> Result {
    let previousOwner = owner.load(ordering: .relaxed)
    let previousStamp = stamp.load(ordering: .relaxed)
    stamp.store(milliseconds, ordering: .relaxed)
    owner.store(thread(), ordering: .releasing)
    defer {
      stamp.store(previousStamp, ordering: .relaxed)
      owner.store(previousOwner, ordering: .releasing)
    }
    return body()
  }

  /// `reducing` without a closure, for the store's path: sets `milliseconds` as `current` on
  /// this thread and returns what `restore` puts back. (The generic closure cost a metadata
  /// lookup of the reducer's `Effect` type per action in the store's unspecialized code.)
  static func set(_ milliseconds: Int64) -> (stamp: Int64, owner: UInt) {
    let previous = (stamp.load(ordering: .relaxed), owner.load(ordering: .relaxed))
    stamp.store(milliseconds, ordering: .relaxed)
    owner.store(thread(), ordering: .releasing)
    return previous
  }

  /// Ends a `set`, putting back the stamp it replaced.
  static func restore(_ previous: (stamp: Int64, owner: UInt)) {
    stamp.store(previous.stamp, ordering: .relaxed)
    owner.store(previous.owner, ordering: .releasing)
  }

  /// A stamp as a `Date`, computed the same way wherever it is read, so that a recorded
  /// stamp yields the very same `Date` (and the same formatted timestamp) in replay.
  public static func date(_ milliseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
  }

  /// Now, in whole milliseconds since the epoch.
  static func now() -> Int64 { milliseconds(nanoseconds()) }

  /// Now on the wall clock, in nanoseconds since the epoch: the one read an entry needs at its
  /// start, which gives both its stamp (`milliseconds(_:)`) and the start of its duration
  /// (`duration(since:)`). The system clock read directly: `Date()` and its conversion cost
  /// three times as much. (A stamp and a monotonic start were two reads, and with the end three
  /// `clock_gettime` calls per action with history on, 1.6% of a pipelined increment's
  /// samples, perf.)
  static func nanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_REALTIME, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
  }

  /// `nanoseconds` in whole milliseconds: an entry's stamp.
  static func milliseconds(_ nanoseconds: Int64) -> Int64 { nanoseconds / 1_000_000 }

  /// The time since `began` (`nanoseconds()`), for an entry's duration. Measured on the wall
  /// clock, whose start read also gave the stamp; should the clock be stepped back meanwhile,
  /// the duration is zero rather than negative (a step forward lengthens that one entry).
  static func duration(since began: Int64) -> Duration {
    .nanoseconds(max(0, nanoseconds() - began))
  }

  private static func thread() -> UInt {
    #if canImport(Glibc)
      UInt(pthread_self())
    #else
      UInt(bitPattern: pthread_self())
    #endif
  }
}

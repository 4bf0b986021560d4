import Synchronization

/// A clock whose time moves only when a test says so: `advance(by:)` wakes, in deadline
/// order, every sleeper whose deadline has come. No real time passes, so a test of a 300 ms
/// debounce or of a backoff over minutes runs in microseconds.
///
/// ```swift
/// let clock = VirtualClock()
/// let store = TestStore(feature: Search(clock: clock))
/// await store.send(.queryChanged("ca")) { $0.query = "ca" }
/// await clock.advance(by: .milliseconds(300))
/// await store.receive(.results(["calendar"])) { $0.results = ["calendar"] }
/// ```
///
/// It lives in `StateKit`, not only in `StateKitTesting` (where it is `TestClock`), because
/// the server moves it too: under `--clock virtual` every effect's timer sleeps on one of
/// these, and `clock/advance` is ``advance(by:)``. What it needs from the store (which effect
/// tasks are asleep on it) comes through `EffectActivity`, the same hook a test store uses.
public final class VirtualClock: Clock, Sendable {
  /// A point on a `VirtualClock`: the time elapsed since the clock was made.
  public struct Instant: InstantProtocol {
    /// The time elapsed since the clock's origin.
    public var offset: Duration

    /// The instant `offset` after the origin.
    public init(offset: Duration = .zero) { self.offset = offset }

    /// The instant `duration` later.
    public func advanced(by duration: Duration) -> Self { Self(offset: offset + duration) }
    /// The time from this instant to `other`.
    public func duration(to other: Self) -> Duration { other.offset - offset }
    /// Whether `lhs` comes first.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.offset < rhs.offset }
  }

  private struct Sleeper {
    var id: UInt64
    var deadline: Instant
    var continuation: CheckedContinuation<Void, any Error>
    var activity: EffectActivity?
  }

  private struct Timeline {
    var now = Instant()
    var sleepers: [Sleeper] = []
    var nextID: UInt64 = 0
    /// The stores whose effects have slept on this clock: `advance` waits for them.
    var activities: [ObjectIdentifier: EffectActivity] = [:]
  }

  private let timeline = Mutex(Timeline())

  /// A clock whose time starts at `now` and moves only with `advance`.
  public init(now: Instant = Instant()) {
    timeline.withLock { $0.now = now }
  }

  /// The current instant.
  public var now: Instant { timeline.withLock { $0.now } }
  /// Zero: any duration is honoured exactly.
  public var minimumResolution: Duration { .zero }

  /// The number of tasks sleeping on this clock now.
  public var sleeperCount: Int { timeline.withLock { $0.sleepers.count } }

  /// Suspends until `advance` moves time to `deadline`; throws `CancellationError` when cancelled.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    try Task.checkCancellation()
    let activity = EffectActivity.current
    let id = timeline.withLock { timeline -> UInt64 in
      timeline.nextID += 1
      return timeline.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        // Checked under the lock: a cancellation handler that ran before this point found
        // no sleeper to resume, so this one must not wait.
        let ready = timeline.withLock { timeline -> Bool in
          if deadline <= timeline.now || Task.isCancelled { return true }
          timeline.sleepers.append(
            Sleeper(id: id, deadline: deadline, continuation: continuation, activity: activity))
          if let activity {
            activity.beganSleeping()
            timeline.activities[ObjectIdentifier(activity)] = activity
          }
          return false
        }
        if ready {
          if Task.isCancelled {
            continuation.resume(throwing: CancellationError())
          } else {
            continuation.resume()
          }
        }
      }
    } onCancel: {
      let sleeper = timeline.withLock { timeline -> Sleeper? in
        guard let index = timeline.sleepers.firstIndex(where: { $0.id == id }) else { return nil }
        let sleeper = timeline.sleepers.remove(at: index)
        sleeper.activity?.endedSleeping()
        return sleeper
      }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time forward by `duration`, waking due sleepers one deadline at a time and
  /// letting each woken task run (and maybe sleep again) before moving on.
  public func advance(by duration: Duration = .zero) async {
    let target = now.advanced(by: duration)
    await settle()
    while let sleeper = popSleeper(dueBy: target) {
      sleeper.continuation.resume()
      await settle()
    }
    timeline.withLock { $0.now = max($0.now, target) }
    await settle()
  }

  /// Moves time forward to `instant`.
  public func advance(to instant: Instant) async {
    await advance(by: now.duration(to: instant))
  }

  /// Advances until no task sleeps on this clock any more (at most `limit` of time), the
  /// way to run a retry loop or a timer to its end.
  public func run(limit: Duration = .seconds(86_400)) async {
    let end = now.advanced(by: limit)
    await settle()
    while let next = timeline.withLock({ $0.sleepers.map(\.deadline).min() }), next <= end {
      await advance(to: next)
    }
  }

  private func popSleeper(dueBy target: Instant) -> Sleeper? {
    timeline.withLock { timeline -> Sleeper? in
      guard
        let index = timeline.sleepers.indices.min(by: {
          (timeline.sleepers[$0].deadline, timeline.sleepers[$0].id)
            < (timeline.sleepers[$1].deadline, timeline.sleepers[$1].id)
        }),
        timeline.sleepers[index].deadline <= target
      else { return nil }
      let sleeper = timeline.sleepers.remove(at: index)
      sleeper.activity?.endedSleeping()
      timeline.now = max(timeline.now, sleeper.deadline)
      return sleeper
    }
  }

  /// Waits until the effects of every store that sleeps on this clock are blocked again
  /// (finished, or asleep on a test clock), so time never moves under a running task. A
  /// few plain yields first let tasks spawned just now start.
  private func settle() async {
    for _ in 0..<8 { await Task.yield() }
    await EffectActivity.settle(timeline.withLock { Array($0.activities.values) })
  }
}

extension VirtualClock.Instant: Comparable {}

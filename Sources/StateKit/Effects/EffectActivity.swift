import Synchronization

/// How many of one store's effect tasks could make progress right now: what `TestClock`
/// and `TestStore` wait on, so that a test moving time never races the tasks it wakes.
///
/// An effect task counts as active from its spawn to its end, except while it waits for
/// other effect tasks (a debounce or a concatenation waiting for what it started); it
/// counts as sleeping while it sleeps on a `TestClock`. When no task is more active than
/// asleep, every effect of the store is blocked on a test clock: the store is quiescent and
/// the clock may move. Per store, so tests running in parallel do not wait for each other.
/// Cost in production: two relaxed atomic adds per effect.
///
/// **The hook for test clocks.** Test clocks live in `StateKitTesting`, out of the production
/// module; this is all they need from here, as `@_spi(Testing)`, so it stays out of the
/// public API: a clock reads `current` when a task starts to sleep on it, calls
/// `beganSleeping()` when the sleeper is parked and `endedSleeping()` when it is woken or
/// cancelled, and `settle(_:)` before moving time. A clock of one's own does the same with
/// `@_spi(Testing) import StateKit`; see `StateKitTesting/TestClock.swift`.
@_spi(Testing) public final class EffectActivity: Sendable {
  /// The activity of the store whose effect is running (nil outside a store's effect).
  @TaskLocal @_spi(Testing) public static var current: EffectActivity?

  private let active = Atomic<Int>(0)
  private let sleeping = Atomic<Int>(0)

  func began() { active.add(1, ordering: .relaxed) }
  func ended() { active.subtract(1, ordering: .relaxed) }
  /// One of the store's effect tasks now waits for a test clock to move.
  @_spi(Testing) public func beganSleeping() { sleeping.add(1, ordering: .relaxed) }
  /// A task counted by `beganSleeping()` was woken or cancelled.
  @_spi(Testing) public func endedSleeping() { sleeping.subtract(1, ordering: .relaxed) }

  var isQuiescent: Bool {
    active.load(ordering: .relaxed) <= sleeping.load(ordering: .relaxed)
  }

  /// The longest a test waits, in real time, for effects to block again; effects blocked on
  /// something other than a test clock (a real network call) end the wait this way. Only a
  /// failure bound: on a loaded two-core machine, with CPU-heavy tests holding both threads of
  /// the cooperative pool, an effect can take seconds to reach its first sleep (0.8 s seen
  /// under load), and moving the clock before it gets there makes a correct test fail.
  static let settleLimit = Duration.seconds(30)

  /// Waits until every activity in `activities` is quiescent (a few yields in a row).
  @_spi(Testing) public static func settle(_ activities: [EffectActivity]) async {
    let deadline = ContinuousClock.now.advanced(by: settleLimit)
    var quietRounds = 0
    var rounds = 0
    while quietRounds < 4 && ContinuousClock.now < deadline {
      // Yield first; past a few hundred rounds something is blocked on the outside world:
      // poll gently instead of spinning against the tasks being waited for.
      rounds += 1
      if rounds < 300 {
        await Task.yield()
      } else {
        try? await Task.sleep(for: .milliseconds(1))
      }
      quietRounds = activities.allSatisfy(\.isQuiescent) ? quietRounds + 1 : 0
    }
  }
}

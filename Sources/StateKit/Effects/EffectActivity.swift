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
final class EffectActivity: Sendable {
  /// The activity of the store whose effect is running, for `TestClock.sleep`.
  @TaskLocal static var current: EffectActivity?

  private let active = Atomic<Int>(0)
  private let sleeping = Atomic<Int>(0)

  func began() { active.add(1, ordering: .relaxed) }
  func ended() { active.subtract(1, ordering: .relaxed) }
  func beganSleeping() { sleeping.add(1, ordering: .relaxed) }
  func endedSleeping() { sleeping.subtract(1, ordering: .relaxed) }

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
  static func settle(_ activities: [EffectActivity]) async {
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

import Synchronization

/// How many effect tasks could make progress right now, process-wide: what `TestClock`
/// waits on so that a test advancing time never races the tasks it wakes.
///
/// An effect task counts as active from its spawn to its end, except while it waits for
/// other effect tasks (a debounce or a concatenation waiting for what it started) or sleeps
/// on a `TestClock`. When no task is active, every effect is blocked on a test clock: the
/// system is quiescent, and the clock may move. Cost in production: two relaxed atomic
/// adds per effect.
enum EffectActivity {
  /// Set for the body of every effect task, so a `TestClock` knows which sleepers count.
  @TaskLocal static var isEffect = false

  private static let active = Atomic<Int>(0)
  private static let sleeping = Atomic<Int>(0)

  static func began() { active.add(1, ordering: .relaxed) }
  static func ended() { active.subtract(1, ordering: .relaxed) }
  static func beganSleeping() { sleeping.add(1, ordering: .relaxed) }
  static func endedSleeping() { sleeping.subtract(1, ordering: .relaxed) }

  /// Whether every effect task is finished, waiting for other effects, or asleep on a test
  /// clock.
  static var isQuiescent: Bool {
    active.load(ordering: .relaxed) <= sleeping.load(ordering: .relaxed)
  }
}

// Skeleton only: issue #4 replaces this with the real Effect (run, cancel, debounce, merge...).
public struct Effect<Action: Sendable, Event: Sendable>: Sendable {
  public static var none: Self { Self() }
}

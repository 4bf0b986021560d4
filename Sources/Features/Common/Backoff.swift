/// How long to wait before retry number `attempt` (1 for the first retry): `base`, then
/// doubling, so a struggling server gets room to recover.
///
/// ```swift
/// Backoff(base: .milliseconds(200)).delay(before: 3)  // 800 ms
/// ```
public struct Backoff: Sendable, Equatable {
  /// The wait before the first retry.
  public var base: Duration
  /// Retries after the first attempt; a call is tried at most `retries + 1` times.
  public var retries: Int

  /// A policy of `retries` retries starting at `base`.
  public init(base: Duration, retries: Int = 3) {
    self.base = base
    self.retries = retries
  }

  /// The wait before retry number `attempt`.
  public func delay(before attempt: Int) -> Duration {
    base * (1 << max(0, attempt - 1))
  }

  /// Runs `operation` until it succeeds, it fails with an error that `shouldRetry` refuses
  /// (by default: one retrying cannot fix), or the retries are used up; the last error is
  /// rethrown. Waits happen on `clock` and end early on cancellation.
  public func run<T: Sendable>(
    clock: any Clock<Duration>,
    retryingIf shouldRetry: (BackendError) -> Bool = { $0.isRecoverable },
    _ operation: () async throws -> T
  ) async throws -> T {
    var attempt = 0
    while true {
      do {
        return try await operation()
      } catch let error as BackendError where shouldRetry(error) && attempt < retries {
        attempt += 1
        try await clock.sleep(for: delay(before: attempt))
      }
    }
  }
}

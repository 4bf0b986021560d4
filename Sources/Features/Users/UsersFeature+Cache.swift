import FoundationEssentials
import StateKit

/// Starting from the cache and revalidating it: the fetch with its fallback source, and the
/// list's age against the time to live.
extension UsersFeature {
  /// Loads from the primary endpoint with retries, then once from the fallback, keeping the
  /// list on screen meanwhile; only when both fail does the load fail (with the primary's
  /// error, the one the user's own connection explains).
  func startLoad(_ state: inout State) -> Effect<Action, Never> {
    state.load.status = .loading
    state.load.error = nil
    return .run { [backend, clock, backoff] send in
      let primaryError: any Error
      do {
        let users = try await backoff.run(clock: clock) { try await backend.listUsers() }
        await send(.internal(.loaded(users: users, source: .network)))
        return
      } catch let error as BackendError {
        primaryError = error
      }
      // The primary's retries already spent the user's patience: the fallback gets one try.
      do {
        let users = try await backend.listUsersFromFallback()
        await send(.internal(.loaded(users: users, source: .fallback)))
      } catch is BackendError {
        await send(
          .internal(
            .loadFailed(
              message: SafeMessage.describing(primaryError, doing: "load users"),
              recoverable: SafeMessage.isRecoverable(primaryError))))
      }
    } catch: { error, send in
      await send(
        .internal(
          .loadFailed(
            message: SafeMessage.describing(error, doing: "load users"),
            recoverable: SafeMessage.isRecoverable(error))))
    }
    .cancellable(id: CancelID.load, cancelInFlight: true)
  }

  /// Marks the list stale once the wall clock is past its expiry. Never clears the mark: only
  /// a successful load makes the list fresh again.
  func markStaleIfExpired(_ state: inout State) {
    guard !state.load.isStale, let lastUpdated = state.load.lastUpdated else { return }
    guard let fetched = Self.date(lastUpdated) else {
      // An unreadable fetch time (a client's initial state) cannot prove the list fresh.
      state.load.isStale = true
      return
    }
    if wallClock.now() >= fetched.addingTimeInterval(Self.seconds(timeToLive)) {
      state.load.isStale = true
    }
  }

  /// Recomputes `expiresAt` from `lastUpdated` and this run's time to live (a restart may
  /// change it with `--users-ttl`).
  func refreshExpiry(_ state: inout State) {
    state.load.expiresAt = state.load.lastUpdated.flatMap(expiry(of:))
  }

  /// The ISO 8601 time at which a list fetched at `timestamp` turns stale.
  func expiry(of timestamp: String) -> String? {
    guard let fetched = Self.date(timestamp) else { return nil }
    // In whole milliseconds, then half a millisecond on top: the formatter truncates, and a
    // binary fraction of .374 s can print as .373.
    let milliseconds =
      (fetched.timeIntervalSince1970 * 1000).rounded() + (Self.seconds(timeToLive) * 1000).rounded()
    return Date(timeIntervalSince1970: (milliseconds + 0.5) / 1000).formatted(Self.timestampStyle)
  }

  /// The format `WallClock.timestamp()` writes.
  static let timestampStyle = Date.ISO8601FormatStyle(
    includingFractionalSeconds: true, timeZone: .gmt)

  static func date(_ timestamp: String) -> Date? {
    try? Date(timestamp, strategy: timestampStyle)
  }

  static func seconds(_ duration: Duration) -> TimeInterval {
    let (seconds, attoseconds) = duration.components
    return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
  }
}

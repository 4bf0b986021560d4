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
    guard !state.load.isStale, let fetched = state.load.lastUpdated else { return }
    guard let expiry = expiry(of: fetched), wallClock.now() < expiry else {
      // Past its time to live, or a fetch time beyond the calendar (a client's initial
      // state) that cannot prove the list fresh.
      state.load.isStale = true
      return
    }
  }

  /// Marks the list stale when it reaches `expiresAt`: a timer on the feature's clock, set
  /// again by each load (the newest wins) and by a restore. It runs in the background, so a
  /// `settled` load answers without waiting minutes for it. A list already stale, or one
  /// expiring as it loads (a time to live of 0), gets none and the timer set before is
  /// cancelled: the next `load` or restart checks its age.
  func expiryTimer(_ state: State) -> Effect<Action, Never> {
    guard !state.load.isStale, let expiresAt = state.load.expiresAt else {
      return .cancel(id: CancelID.expiry)
    }
    let milliseconds = (expiresAt.timeIntervalSince(wallClock.now()) * 1000).rounded(.up)
    guard milliseconds > 0, let delay = Int64(exactly: milliseconds) else {
      return .cancel(id: CancelID.expiry)
    }
    return .run { [clock] send in
      try await clock.sleep(for: .milliseconds(delay))
      await send(.internal(.expired))
    }
    .cancellable(id: CancelID.expiry, cancelInFlight: true)
    .background()
  }

  /// Recomputes `expiresAt` from `lastUpdated` and this run's time to live (a restart may
  /// change it with `--users-ttl`).
  func refreshExpiry(_ state: inout State) {
    state.load.expiresAt = state.load.lastUpdated.flatMap(expiry(of:))
  }

  /// The time at which a list fetched at `fetched` turns stale; nil past any calendar.
  ///
  /// Summed in whole milliseconds and made the way a reduce's stamp is (`ReduceTime.date`),
  /// so the expiry is the same `Date` whether computed now, after a restart or in replay.
  func expiry(of fetched: Date) -> Date? {
    let milliseconds =
      (fetched.timeIntervalSince1970 * 1000).rounded() + (Self.seconds(timeToLive) * 1000).rounded()
    // Past ±2^53 ms (285,000 years) a Double no longer counts milliseconds.
    guard let whole = Int64(exactly: milliseconds), abs(whole) < 1 << 53 else { return nil }
    return ReduceTime.date(whole)
  }

  static func seconds(_ duration: Duration) -> TimeInterval {
    let (seconds, attoseconds) = duration.components
    return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
  }
}

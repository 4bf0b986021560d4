import FoundationEssentials

/// Where a list stands with the server: never loaded, loading, loaded, or failed, with the
/// time of the last good load, when it turns stale, and whether what is shown may be out of
/// date (older than its time to live, or a later load failed).
///
/// An empty list is `loaded`, not `failed`: "nothing there" and "could not ask" are different.
public struct LoadState: Codable, Equatable, Sendable {
  /// Where the load stands.
  public enum Status: String, Codable, Sendable, CaseIterable {
    case idle, loading, loaded, failed
  }

  /// A failure as the user sees it: a safe message and whether trying again can help.
  public struct Failure: Codable, Equatable, Sendable {
    /// What went wrong and what to do, for a person.
    public var message: String
    /// Whether trying again can succeed.
    public var recoverable: Bool

    /// A failure to show.
    public init(message: String, recoverable: Bool) {
      self.message = message
      self.recoverable = recoverable
    }
  }

  /// Where the load stands.
  public var status: Status
  /// The last failure while `failed`; `null` otherwise.
  public var error: Failure?
  /// The time of the last successful load (the cached list's fetch time).
  public var lastUpdated: Date?
  /// The time at which the list turns stale: `lastUpdated` plus the time to live.
  public var expiresAt: Date?
  /// True when the list shown may be out of date: it is past `expiresAt` (marked when that
  /// time comes, by a timer each load sets, and checked when the store starts and at each
  /// `load`), or a later load failed and this is the last good one.
  public var isStale: Bool

  /// A load state; idle by default.
  public init(
    status: Status = .idle, error: Failure? = nil, lastUpdated: Date? = nil,
    expiresAt: Date? = nil, isStale: Bool = false
  ) {
    self.status = status
    self.error = error
    self.lastUpdated = lastUpdated
    self.expiresAt = expiresAt
    self.isStale = isStale
  }
}

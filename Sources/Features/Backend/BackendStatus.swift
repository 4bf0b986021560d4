/// What the simulated backend looks like from outside: its settings and how many calls each
/// endpoint received. This is the published view of the `backend` store.
public struct BackendStatus: Codable, Equatable, Sendable {
  /// False when the primary endpoint refuses every call as offline.
  public var online: Bool
  /// How long each reply takes.
  public var latencyMs: Int
  /// The share of the primary endpoint's calls that fail with a network error, 0 to 1.
  public var failRate: Double
  /// The fallback endpoint's own switches (it serves the users list when the primary fails).
  public var fallback: FallbackStatus
  /// Calls received per endpoint name (`searchUsers`, `uploadNote`, ...), so a test can see
  /// that a debounce sent one request.
  public var requests: [String: Int]

  /// A status; the defaults are the command line's.
  public init(
    online: Bool = true, latencyMs: Int = 50, failRate: Double = 0,
    fallback: FallbackStatus = FallbackStatus(), requests: [String: Int] = [:]
  ) {
    self.online = online
    self.latencyMs = latencyMs
    self.failRate = failRate
    self.fallback = fallback
    self.requests = requests
  }
}

/// The fallback endpoint's switches, apart from the primary's.
public struct FallbackStatus: Codable, Equatable, Sendable {
  /// False when the fallback refuses every call as offline.
  public var online: Bool
  /// The share of the fallback's calls that fail with a network error, 0 to 1.
  public var failRate: Double

  /// A fallback status; online and reliable by default.
  public init(online: Bool = true, failRate: Double = 0) {
    self.online = online
    self.failRate = failRate
  }
}

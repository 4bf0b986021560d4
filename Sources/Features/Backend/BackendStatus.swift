/// What the simulated backend looks like from outside: its settings and how many calls each
/// endpoint received. This is the published view of the `backend` store.
public struct BackendStatus: Codable, Equatable, Sendable {
  /// False when the backend refuses every call as offline.
  public var online: Bool
  /// How long each reply takes.
  public var latencyMs: Int
  /// The share of calls that fail with a network error, 0 to 1.
  public var failRate: Double
  /// Calls received per endpoint name (`searchUsers`, `uploadNote`, ...), so a test can see
  /// that a debounce sent one request.
  public var requests: [String: Int]

  /// A status; the defaults are the command line's.
  public init(
    online: Bool = true, latencyMs: Int = 50, failRate: Double = 0, requests: [String: Int] = [:]
  ) {
    self.online = online
    self.latencyMs = latencyMs
    self.failRate = failRate
    self.requests = requests
  }
}

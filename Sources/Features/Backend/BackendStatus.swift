/// What the simulated backend looks like from outside: its settings and how many calls each
/// endpoint received. This is the published view of the `backend` store.
public struct BackendStatus: Codable, Equatable, Sendable {
  public var online: Bool
  public var latencyMs: Int
  public var failRate: Double
  /// Calls received per endpoint name (`searchUsers`, `uploadNote`, ...), so a test can see
  /// that a debounce sent one request.
  public var requests: [String: Int]

  public init(
    online: Bool = true, latencyMs: Int = 50, failRate: Double = 0, requests: [String: Int] = [:]
  ) {
    self.online = online
    self.latencyMs = latencyMs
    self.failRate = failRate
    self.requests = requests
  }
}

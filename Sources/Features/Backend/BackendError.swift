/// Why a call to the simulated backend failed. Features map these to safe, user-facing
/// messages; the cases carry what a reducer needs to decide, never internal detail.
public enum BackendError: Error, Equatable, Sendable {
  /// The backend is switched offline (`setOnline false`); nothing reached the server.
  case offline
  /// A transient failure drawn from the failure rate; retrying may succeed.
  case network
  /// The server refused a coupon code.
  case invalidCoupon
  /// The server's copy of a note changed since the client last synchronized it.
  case conflict(serverText: String, revision: Int)
  /// The server has no such record.
  case notFound

  /// Whether trying again later can succeed without the user changing anything.
  public var isRecoverable: Bool {
    switch self {
    case .offline, .network: return true
    case .invalidCoupon, .conflict, .notFound: return false
    }
  }
}

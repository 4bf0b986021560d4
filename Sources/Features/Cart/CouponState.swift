/// The cart's coupon: none, being checked by the server, applied, or refused.
public struct CouponState: Codable, Equatable, Sendable {
  /// Where the coupon stands.
  public enum Status: String, CaseIterable, Codable, Sendable {
    case none, applying, applied, failed
  }

  public var status: Status
  /// The code as checked (trimmed, upper case); `null` when none.
  public var code: String?
  /// What the user is told: the discount on success, the reason on failure.
  public var message: String?

  /// A coupon state; the default is "no coupon".
  public init(status: Status = .none, code: String? = nil, message: String? = nil) {
    self.status = status
    self.code = code
    self.message = message
  }
}

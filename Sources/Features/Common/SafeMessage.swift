/// User-facing messages for backend failures: what happened and what to do, never internal
/// detail.
enum SafeMessage {
  static func describing(_ error: any Error, doing task: String) -> String {
    switch error as? BackendError {
    case .offline?:
      return "You appear to be offline. Check your connection and try again."
    case .network?, nil:
      return "Could not \(task). Please try again."
    case .invalidCoupon?:
      return "This coupon is not valid."
    case .conflict?:
      return "Someone else changed this on the server."
    case .notFound?:
      return "It no longer exists on the server."
    }
  }

  /// Whether trying again later can succeed; unknown errors are assumed transient.
  static func isRecoverable(_ error: any Error) -> Bool {
    (error as? BackendError)?.isRecoverable ?? true
  }
}

/// Arithmetic that stops at the bounds instead of trapping: stored numbers can come from a
/// client (`store/open` merges any state, unvalidated), and a trap would end the whole server.
///
/// ```swift
/// Int.max.saturatingAdding(1)  // Int.max
/// ```
extension Int {
  /// `self + other`, or the nearest bound when the sum does not fit.
  public func saturatingAdding(_ other: Int) -> Int {
    let (sum, overflow) = addingReportingOverflow(other)
    guard overflow else { return sum }
    return other > 0 ? .max : .min
  }

  /// `self * other`, or the nearest bound when the product does not fit.
  public func saturatingMultiplied(by other: Int) -> Int {
    let (product, overflow) = multipliedReportingOverflow(by: other)
    guard overflow else { return product }
    return (self < 0) == (other < 0) ? .max : .min
  }
}

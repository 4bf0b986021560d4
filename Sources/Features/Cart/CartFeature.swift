import FoundationEssentials
import StateKit

/// A shopping cart: quantities, a coupon checked by the server, and `total` and `badgeCount`
/// derived in the view so they can never disagree with the items.
///
/// A coupon reprices the items (the server returns them discounted); the full prices are
/// kept privately so that clearing the coupon restores them and applying twice never
/// discounts twice.
public struct CartFeature: Feature {
  /// The items and the coupon; totals are derived in the view.
  public struct State: Codable, Equatable, Sendable {
    /// The lines of the cart, in the order they were added.
    public var items: IdentifiedArray<CartItem>
    public var coupon: CouponState
    /// Full prices of items repriced by the applied coupon, by item id. Private.
    public var fullPrices: [String: Int]

    public init(
      items: IdentifiedArray<CartItem> = [], coupon: CouponState = CouponState(),
      fullPrices: [String: Int] = [:]
    ) {
      self.items = items
      self.coupon = coupon
      self.fullPrices = fullPrices
    }
  }

  /// The published cart: the state plus `total` and `badgeCount`.
  public struct View: Codable, Equatable, Sendable {
    public var items: IdentifiedArray<CartItem>
    public var coupon: CouponState
    /// Sum of price times quantity, in cents.
    public var total: Int
    /// Number of pieces in the cart, for the icon's badge.
    public var badgeCount: Int
  }

  /// What a client may do with the cart, and the coupon results the effects send back.
  public enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    /// Adds one piece; an id already in the cart raises its quantity.
    case add(id: String, name: String, price: Int)
    /// Sets a quantity; 0 removes the item, a negative quantity is refused.
    case setQuantity(id: String, quantity: Int)
    case remove(id: String)
    case applyCoupon(code: String)
    case clearCoupon
    /// Sent by the feature itself; a client's is refused (-32003).
    case `internal`(Internal)

    /// The results of the coupon effect.
    public enum Internal: Codable, Equatable, Sendable {
      case couponApplied(code: String, items: [CartItem])
      case couponFailed(code: String, message: String)
    }
  }

  /// `toast` when a coupon was applied or refused.
  public enum Event: Codable, Equatable, Sendable {
    case toast(message: String)
  }

  public static let name = "cart"

  static let invalidCouponMessage = "This coupon is not valid."

  /// The largest price `add` accepts, in cents (ten billion): far beyond any real item, and
  /// small enough that totals of real carts never approach `Int.max`.
  public static let maximumPrice = 1_000_000_000_000
  /// The largest quantity `setQuantity` accepts.
  public static let maximumQuantity = 1_000_000

  let backend: Backend

  /// A cart whose coupons are checked by `backend`.
  public init(backend: Backend) {
    self.backend = backend
  }

  enum CancelID { case coupon }

  public var initialState: State { State() }

  public func view(of state: State) -> View {
    View(
      items: state.items, coupon: state.coupon,
      total: state.items.reduce(0) {
        $0.saturatingAdding($1.price.saturatingMultiplied(by: $1.quantity))
      },
      badgeCount: state.items.reduce(0) { $0.saturatingAdding($1.quantity) })
  }

  public func validate(_ action: Action) throws(ActionValidationError) {
    switch action {
    case .add(let id, let name, let price):
      if id.isEmpty {
        throw ActionValidationError(pointer: "/id", reason: "expected a non-empty id")
      }
      if Self.isBlank(name) {
        throw ActionValidationError(pointer: "/name", reason: "expected a non-blank name")
      }
      if !(0...Self.maximumPrice).contains(price) {
        throw ActionValidationError(
          pointer: "/price",
          reason: "expected a price in cents from 0 to \(Self.maximumPrice), got \(price)")
      }
    case .setQuantity(_, let quantity) where !(0...Self.maximumQuantity).contains(quantity):
      throw ActionValidationError(
        pointer: "/quantity",
        reason: "expected a quantity from 0 to \(Self.maximumQuantity), got \(quantity)")
    case .applyCoupon(let code) where Self.isBlank(code):
      throw ActionValidationError(pointer: "/code", reason: "expected a non-blank coupon code")
    default:
      return
    }
  }

  /// A supplied cart obeys, item by item, the rules of `add` and `setQuantity`.
  public func validate(state: State) throws(ActionValidationError) {
    for (index, item) in state.items.enumerated() {
      do {
        try validate(.add(id: item.id, name: item.name, price: item.price))
        try validate(.setQuantity(id: item.id, quantity: item.quantity))
      } catch {
        throw error.within("/items/\(index)")
      }
    }
  }

  public func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
    switch action {
    case .add(let id, let name, let price):
      if state.items[id: id] != nil {
        state.items.modify(id: id) { $0.quantity = $0.quantity.saturatingAdding(1) }
      } else {
        state.items.append(CartItem(id: id, name: name, price: price))
      }
      return .none

    case .setQuantity(let id, let quantity):
      guard state.items[id: id] != nil else { return .none }
      if quantity == 0 {
        return reduce(into: &state, action: .remove(id: id))
      }
      state.items.modify(id: id) { $0.quantity = quantity }
      return .none

    case .remove(let id):
      state.items.remove(id: id)
      state.fullPrices[id] = nil
      return .none

    case .applyCoupon(let code):
      let code = code.trimmingCharacters(in: .whitespacesAndNewlines).uppercased()
      if state.coupon.status == .applied && state.coupon.code == code { return .none }
      restoreFullPrices(&state)
      state.coupon = CouponState(status: .applying, code: code)
      let items = Array(state.items)
      return .run { [backend] send in
        let repriced = try await backend.applyCoupon(code: code, items: items)
        await send(.internal(.couponApplied(code: code, items: repriced)))
      } catch: { error, send in
        let message =
          (error as? BackendError) == .invalidCoupon
          ? Self.invalidCouponMessage
          : "Could not reach the server to apply the coupon. Please try again."
        await send(.internal(.couponFailed(code: code, message: message)))
      }
      .cancellable(id: CancelID.coupon, cancelInFlight: true)

    case .clearCoupon:
      restoreFullPrices(&state)
      state.coupon = CouponState()
      return .cancel(id: CancelID.coupon)

    case .internal(.couponApplied(let code, let repriced)):
      guard state.coupon.status == .applying, state.coupon.code == code else { return .none }
      // Only prices change: quantities edited while the server answered are kept.
      for item in repriced {
        guard let current = state.items[id: item.id] else { continue }
        state.fullPrices[item.id] = current.price
        state.items.modify(id: item.id) { $0.price = item.price }
      }
      let message = "Coupon \(code) applied: 10% off."
      state.coupon = CouponState(status: .applied, code: code, message: message)
      return .emit(.toast(message: message))

    case .internal(.couponFailed(let code, let message)):
      guard state.coupon.status == .applying, state.coupon.code == code else { return .none }
      state.coupon = CouponState(status: .failed, code: code, message: message)
      return .emit(.toast(message: message))
    }
  }

  private func restoreFullPrices(_ state: inout State) {
    for (id, price) in state.fullPrices { state.items.modify(id: id) { $0.price = price } }
    state.fullPrices = [:]
  }

  static func isBlank(_ text: String) -> Bool {
    text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
  }
}

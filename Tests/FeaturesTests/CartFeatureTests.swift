import Features
import JSON
import StateKit
import StateKitTesting
import Testing

@StateActor
@Suite struct CartFeatureTests {
  let clock = TestClock()

  func cart(_ items: CartItem...) -> CartFeature.State {
    CartFeature.State(items: IdentifiedArray(items))
  }

  @Test func addingAnExistingIdRaisesItsQuantity() async {
    let store = TestStore(feature: CartFeature(backend: testBackend(clock: clock)))
    await store.send(.add(id: "tea", name: "Tea", price: 450)) {
      $0.items.append(CartItem(id: "tea", name: "Tea", price: 450))
    }
    await store.send(.add(id: "tea", name: "Tea", price: 450)) {
      $0.items.modify(id: "tea") { $0.quantity = 2 }
    }
    await store.finish()
  }

  @Test func totalAndBadgeCountAreDerivedFromTheItems() {
    let feature = CartFeature(backend: testBackend(clock: clock))
    let view = feature.view(
      of: cart(
        CartItem(id: "a", name: "A", price: 250, quantity: 3),
        CartItem(id: "b", name: "B", price: 1000, quantity: 1)))
    #expect(view.total == 1750)
    #expect(view.badgeCount == 4)
    #expect(feature.view(of: cart()).total == 0)
  }

  @Test func quantityZeroRemovesAndNegativeIsRefused() async {
    let feature = CartFeature(backend: testBackend(clock: clock))
    let store = TestStore(
      feature: feature, initialState: cart(CartItem(id: "a", name: "A", price: 100)))
    await store.send(.setQuantity(id: "a", quantity: 5)) {
      $0.items.modify(id: "a") { $0.quantity = 5 }
    }
    await store.send(.setQuantity(id: "a", quantity: 0)) { $0.items.remove(id: "a") }
    await store.send(.setQuantity(id: "ghost", quantity: 2))
    await store.finish()

    let refusals = TestStore(feature: feature)
    refusals.send(
      wire: ["type": "setQuantity", "id": "a", "quantity": -1], refusedWith: -32602,
      pointer: "/quantity")
    refusals.send(
      wire: ["type": "add", "id": "x", "name": "X", "price": -5], refusedWith: -32602,
      pointer: "/price")
    // The published schemas allow no other member, and neither does the server (issue 10).
    refusals.send(
      wire: ["type": "add", "id": "x", "name": "X", "price": 5, "colour": "red"],
      refusedWith: -32602, pointer: "/colour")
    refusals.send(wire: ["type": "clearCoupon", "now": true], refusedWith: -32602, pointer: "/now")
  }

  @Test func removeTakesTheItemOut() async {
    let store = TestStore(
      feature: CartFeature(backend: testBackend(clock: clock)),
      initialState: cart(
        CartItem(id: "a", name: "A", price: 100), CartItem(id: "b", name: "B", price: 5)))
    await store.send(.remove(id: "a")) { $0.items.remove(id: "a") }
    await store.finish()
  }

  @Test func save10RepricesEveryItemAndToasts() async {
    let backend = testBackend(clock: clock)
    let store = TestStore(
      feature: CartFeature(backend: backend),
      initialState: cart(
        CartItem(id: "a", name: "A", price: 1000, quantity: 2),
        CartItem(id: "b", name: "B", price: 450)))
    await store.send(.applyCoupon(code: "save10")) {
      $0.coupon = CouponState(status: .applying, code: "SAVE10")
    }
    await clock.advance(by: .milliseconds(50))
    await store.receive(
      .internal(
        .couponApplied(
          code: "SAVE10",
          items: [
            CartItem(id: "a", name: "A", price: 900, quantity: 2),
            CartItem(id: "b", name: "B", price: 405),
          ]))
    ) {
      $0.items.modify(id: "a") { $0.price = 900 }
      $0.items.modify(id: "b") { $0.price = 405 }
      $0.fullPrices = ["a": 1000, "b": 450]
      $0.coupon = CouponState(
        status: .applied, code: "SAVE10", message: "Coupon SAVE10 applied: 10% off.")
    }
    store.receiveEvents([["type": "toast", "message": "Coupon SAVE10 applied: 10% off."]])

    // Applying it again never discounts twice; clearing restores the full prices.
    await store.send(.applyCoupon(code: "SAVE10"))
    await store.send(.clearCoupon) {
      $0.items.modify(id: "a") { $0.price = 1000 }
      $0.items.modify(id: "b") { $0.price = 450 }
      $0.fullPrices = [:]
      $0.coupon = CouponState()
    }
    await store.finish()
  }

  @Test func anUnknownCodeFailsWithTheIssuesMessage() async {
    let store = TestStore(
      feature: CartFeature(backend: testBackend(clock: clock)),
      initialState: cart(CartItem(id: "a", name: "A", price: 100)))
    await store.send(.applyCoupon(code: "FREE")) {
      $0.coupon = CouponState(status: .applying, code: "FREE")
    }
    await clock.advance(by: .milliseconds(50))
    await store.receive(
      .internal(.couponFailed(code: "FREE", message: "This coupon is not valid."))
    ) {
      $0.coupon = CouponState(status: .failed, code: "FREE", message: "This coupon is not valid.")
    }
    store.receiveEvents([["type": "toast", "message": "This coupon is not valid."]])
    await store.finish()
  }

  @Test func aNetworkFailureFailsWithARecoverableMessage() async {
    let message = "Could not reach the server to apply the coupon. Please try again."
    let store = TestStore(
      feature: CartFeature(backend: testBackend(clock: clock, failRate: 1)),
      initialState: cart(CartItem(id: "a", name: "A", price: 100)))
    await store.send(.applyCoupon(code: "SAVE10")) {
      $0.coupon = CouponState(status: .applying, code: "SAVE10")
    }
    await clock.advance(by: .milliseconds(50))
    await store.receive(.internal(.couponFailed(code: "SAVE10", message: message))) {
      $0.coupon = CouponState(status: .failed, code: "SAVE10", message: message)
    }
    store.receiveEvents([["type": "toast", "message": .string(message)]])
    await store.finish()
  }

  @Test func clearingWhileApplyingCancelsTheRequest() async {
    let store = TestStore(
      feature: CartFeature(backend: testBackend(clock: clock)),
      initialState: cart(CartItem(id: "a", name: "A", price: 100)))
    await store.send(.applyCoupon(code: "SAVE10")) {
      $0.coupon = CouponState(status: .applying, code: "SAVE10")
    }
    await store.send(.clearCoupon) { $0.coupon = CouponState() }
    await clock.run(until: store)
    await store.finish()
  }

  /// Regression: Int.max prices and quantities (from store/open, unvalidated) trapped in
  /// view(of:), add and the coupon, killing the whole server.
  @Test func hugePricesAndQuantitiesNeverTrap() async throws {
    let feature = CartFeature(backend: testBackend(clock: clock))
    let huge = cart(
      CartItem(id: "a", name: "A", price: .max, quantity: 2),
      CartItem(id: "b", name: "B", price: 1, quantity: .max))
    #expect(feature.view(of: huge).total == .max)
    #expect(feature.view(of: huge).badgeCount == .max)
    let store = TestStore(feature: feature, initialState: huge)
    await store.send(.add(id: "b", name: "B", price: 1))  // quantity stays at Int.max
    await store.finish()
    let repriced = try await instantBackend().applyCoupon(
      code: "SAVE10", items: [CartItem(id: "a", name: "A", price: .max)])
    #expect(repriced.first?.price == Int.max / 10 * 9 + (Int.max % 10 * 9 + 5) / 10)

    let refusals = TestStore(feature: feature)
    refusals.send(
      wire: ["type": "add", "id": "x", "name": "X", "price": .integer(Int64.max)],
      refusedWith: -32602, pointer: "/price")
    refusals.send(
      wire: ["type": "setQuantity", "id": "a", "quantity": 1_000_001], refusedWith: -32602,
      pointer: "/quantity")
  }
}

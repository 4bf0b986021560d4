import Features
import JSON
import StateKit
import StateKitTesting
import Testing

/// `store/open`'s `state` obeys the rules the feature applies to actions (issue 10, item 7):
/// `Feature.validate(state:)`, called by the store on a supplied initial state.
@StateActor
@Suite struct InitialStateValidationTests {
  let clock = TestClock()

  /// The refusal of opening a store of `feature` with `initial` merged over its initial state.
  func opening<F: Feature>(_ initial: JSON, with feature: F) -> ActionError? {
    do throws(ActionError) {
      let store = try Store(feature: feature, id: "s", initial: initial, restoring: nil)
      store.close()
      return nil
    } catch {
      return error
    }
  }

  @Test func aSuppliedCartIsCheckedItemByItemWithTheRulesOfAddAndSetQuantity() {
    let feature = CartFeature(backend: testBackend(clock: clock))
    func item(_ id: String, price: Int, quantity: Int) -> JSON {
      [
        "id": .string(id), "name": "x", "price": .integer(Int64(price)),
        "quantity": .integer(Int64(quantity)),
      ]
    }
    #expect(
      opening(["items": [item("a", price: -100, quantity: -5)]], with: feature)?.pointer
        == "/items/0/price")
    #expect(
      opening(
        ["items": [item("a", price: 1, quantity: 1), item("b", price: 1, quantity: -5)]],
        with: feature)?.pointer == "/items/1/quantity")
    #expect(
      opening(["items": [item("", price: 1, quantity: 1)]], with: feature)?.pointer
        == "/items/0/id")
    #expect(opening(["items": [item("a", price: 100, quantity: 2)]], with: feature) == nil)
  }

  @Test func aSuppliedBackendStatusIsCheckedWithTheRulesOfItsSettings() {
    let backend = testBackend(clock: clock)
    let feature = BackendFeature(backend: backend, initial: backend.initialStatus)
    #expect(opening(["failRate": 5], with: feature)?.pointer == "/failRate")
    #expect(opening(["latencyMs": -5], with: feature)?.pointer == "/latencyMs")
    guard case .invalid(_, let reason)? = opening(["latencyMs": 60_001], with: feature) else {
      Issue.record("a latency past 60000 was accepted")
      return
    }
    #expect(reason.contains("60000"))
    #expect(opening(["failRate": 0.5, "latencyMs": 10], with: feature) == nil)
  }

  @Test func aFeatureWithoutStateRulesAcceptsEveryStateThatDecodes() {
    let feature = CounterFeature(clock: TestClock())
    #expect(opening(["count": -7], with: feature) == nil)
  }
}

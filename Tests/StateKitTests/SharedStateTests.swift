import StateKit
import StateKitTesting
import Testing

/// The store `Basket` reads.
struct Catalog: Feature {
  struct State: Codable, Equatable, Sendable { var prices: [String: Int] = [:] }
  enum Action: Codable, Equatable, Sendable { case setPrice(item: String, cents: Int) }
  static let name = "catalog"
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    if case .setPrice(let item, let cents) = action { state.prices[item] = cents }
    return .none
  }
}

// The example of docs/guide/writing-a-feature.md ("Reading another store's state"), verbatim
// between the markers; tests/test_readme.py checks that the two agree.
// guide: begin
struct Basket: Feature {
  struct State: Codable, Equatable, Sendable {
    var total = 0
    var pricedAt: UInt64?  // the catalog's version the last price was read at
  }
  enum Action: Codable, Equatable, Sendable { case add(item: String) }
  enum Event: Codable, Equatable, Sendable { case toast(message: String) }
  static let name = "basket"

  /// The `catalog` store's state: read, never copied.
  let catalog: Shared<Catalog.State>
  init(catalog: Shared<Catalog.State> = Shared(Catalog.self)) { self.catalog = catalog }
  var dependencies: [SharedDependency] { [catalog.dependency] }

  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
    switch action {
    case .add(let item):
      guard let catalog = catalog.current, let cents = catalog.value.prices[item] else {
        return .emit(.toast(message: "\(item) is not for sale."))
      }
      state.total += cents
      state.pricedAt = catalog.version
      return .none
    }
  }
}

@StateActor @Test func aBasketPricesWithTheCatalogItIsGiven() async {
  let catalog = Shared(fixed: Catalog.State(prices: ["tea": 250]), version: 3)
  let store = TestStore(feature: Basket(catalog: catalog))
  await store.send(.add(item: "tea")) {
    $0.total = 250
    $0.pricedAt = 3
  }
  await store.send(.add(item: "cake"))
  await store.receive(event: .toast(message: "cake is not for sale."))
  await store.finish()
}
// guide: end

@StateActor
@Suite struct SharedStateTests {
  @Test func aBoundHandleReadsTheOtherStoreAtItsVersionEachTime() throws {
    let catalog = Store(feature: Catalog())
    let basket = Basket()
    let dependency = try #require(basket.dependencies.first)
    #expect(dependency.storeID == "catalog" && dependency.featureName == "catalog")
    #expect(basket.catalog.current == nil)  // unbound: nothing to read
    dependency.bind { id in id == "catalog" ? catalog : nil }
    let store = Store(feature: basket)
    defer { store.close() }

    catalog.send(.setPrice(item: "tea", cents: 250))
    store.send(.add(item: "tea"))
    #expect(store.state == Basket.State(total: 250, pricedAt: 1))
    catalog.send(.setPrice(item: "tea", cents: 300))  // written there, read here
    store.send(.add(item: "tea"))
    #expect(store.state == Basket.State(total: 550, pricedAt: 2))
  }

  @Test func aHandleOnAStoreOfAnotherFeatureReadsNothing() throws {
    let impostor = Store(feature: Basket(catalog: Shared(fixed: Catalog.State())), id: "catalog")
    defer { impostor.close() }
    let basket = Basket()
    try #require(basket.dependencies.first).bind { _ in impostor }
    #expect(basket.catalog.current == nil)
  }

  @Test func aFixedHandleDeclaresNoStoreForTheServerToBind() {
    let basket = Basket(catalog: Shared(fixed: Catalog.State()))
    #expect(basket.catalog.current?.version == 0)
    #expect(basket.descriptor().dependencies.isEmpty)
    #expect(Basket().descriptor().dependencies.map(\.storeID) == ["catalog"])
  }
}

import Testing

@testable import StateKit

/// A store's publisher walks with a walker that keeps its levels between walks, and the levels
/// (and the keyed containers they keep) hold the walker: the publisher's end must let them go
/// (`PatchWalk.Kept`), or every store would leak its walker, levels and containers.
@StateActor
@Suite struct PublisherWalkerTests {
  @Test func aStoresWalkerAndItsLevelsGoWithTheStore() {
    weak var walker: PatchWalk?
    do {
      let store = Store(feature: Shelf())
      store.send(.add(id: "a", title: "A", at: nil))
      store.send(.rename(id: "a", title: "B"))
      // The mode enum's cases: other key types walked at the same depth as the books.
      store.send(.edit(id: "a"))
      store.send(.note("kept"))
      walker = Mirror(reflecting: store.publisher).descendant("walker") as? PatchWalk
      #expect(walker != nil)
    }
    #expect(walker == nil)
  }
}

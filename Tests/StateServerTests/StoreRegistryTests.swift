import JSON
import StateKit
import Testing

@testable import StateServer

@StateActor
@Suite struct StoreRegistryTests {
  /// Closing leaves holes in the opening order that are compacted later (closing one store
  /// used to scan every id: shutdown with 20,000 stores took 11 s); the order must survive.
  @Test func closingManyStoresKeepsTheOpeningOrderOfTheRest() throws {
    let registry = StoreRegistry(features: [ScriptedStore.descriptor], persistence: nil)
    let feature = try #require(registry.feature(named: ScriptedStore.descriptor.name))
    for index in 0..<100 {
      _ = try registry.open(feature: feature, id: "s\(index)", initial: nil, persist: false)
    }
    for index in 0..<100 where index % 3 != 0 { try registry.close("s\(index)") }
    _ = try registry.open(feature: feature, id: "s1", initial: nil, persist: false)
    try registry.close("s3")
    let expected = (0..<100).filter { $0 % 3 == 0 && $0 != 3 }.map { "s\($0)" } + ["s1"]
    #expect(registry.openStores.map(\.id) == expected)
    registry.closeAll()
    #expect(registry.openStores.isEmpty)
    _ = try registry.open(feature: feature, id: "s3", initial: nil, persist: false)
    #expect(registry.openStores.map(\.id) == ["s3"])
  }

  /// `store(_:)` remembers the store it found last; a closed store must not be found through
  /// that memory, and an id opened again must find the new store.
  @Test func aStoreFoundLastIsForgottenWhenItCloses() throws {
    let registry = StoreRegistry(features: [ScriptedStore.descriptor], persistence: nil)
    let feature = try #require(registry.feature(named: ScriptedStore.descriptor.name))
    let first = try registry.open(feature: feature, id: "a", initial: nil, persist: false)
    #expect(registry.store("a") === first)
    try registry.close("a")
    #expect(registry.store("a") == nil)
    let second = try registry.open(feature: feature, id: "a", initial: nil, persist: false)
    #expect(registry.store("a") === second)
    #expect(second !== first)
  }
}

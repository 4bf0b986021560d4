import JSON
import StateKit
import Testing

@testable import StateServer

/// A feature read by `Reader`.
private struct Source: Feature {
  struct State: Codable, Equatable, Sendable { var value = 7 }
  enum Action: Codable, Sendable { case bump }
  static let name = "source"
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    state.value += 1
    return .none
  }
}

/// A feature that copies what it reads from the `source` store.
private struct Reader: Feature {
  struct State: Codable, Equatable, Sendable { var seen: Int? }
  enum Action: Codable, Sendable { case read }
  static let name = "reader"
  let source = Shared(Source.self)
  var dependencies: [SharedDependency] { [source.dependency] }
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    state.seen = source.current?.value.value
    return .none
  }
}

/// A feature that reads a store of its own feature.
private struct Mirror: Feature {
  struct State: Codable, Equatable, Sendable {}
  enum Action: Codable, Sendable { case read }
  static let name = "mirror"
  let itself = Shared(Mirror.self)
  var dependencies: [SharedDependency] { [itself.dependency] }
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> { .none }
}

@StateActor
@Suite struct StoreRegistrySharedTests {
  @Test func theDefaultStoresBindEveryDeclaredHandle() throws {
    let registry = StoreRegistry(
      features: [Reader().descriptor(), Source().descriptor()], persistence: nil)
    try registry.openDefaultStores()
    defer { registry.closeAll() }
    _ = try registry.store("source")?.send(wire: ["type": "bump"], cause: nil)
    _ = try registry.store("reader")?.send(wire: ["type": "read"], cause: nil)
    #expect(registry.store("reader")?.published == ["seen": 8])
  }

  @Test func aHandleWhoseStoreIsMissingKeepsTheServerFromStarting() {
    let registry = StoreRegistry(features: [Reader().descriptor()], persistence: nil)
    defer { registry.closeAll() }
    #expect(
      throws: RPCError.internalError(
        "feature 'reader' reads store 'source' of feature 'source': no such store is open")
    ) { try registry.openDefaultStores() }
  }

  @Test func aFeatureReadingItsOwnStoresIsRefusedBeforeAnyStoreOpens() {
    let registry = StoreRegistry(features: [Mirror().descriptor()], persistence: nil)
    defer { registry.closeAll() }
    #expect(
      throws: RPCError.internalError(
        "feature 'mirror' reads store 'mirror' of feature 'mirror': "
          + "a feature cannot read a store of its own feature")
    ) { try registry.openDefaultStores() }
    #expect(registry.openStores.isEmpty)
  }
}

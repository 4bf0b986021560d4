import JSON
import Testing

@testable import StateKit

/// A wire action reaches the store through its feature's `_send` witness: the path that is
/// compiled specialized in the feature's module (docs/architecture.md). Were `AnyStore`'s send
/// to bypass it, the store would run its generic code again, as fast tests would not notice.
@StateActor
@Suite struct FeatureSendTests {
  struct Routed: Feature {
    struct State: Codable, Equatable, Sendable { var count = 0 }
    enum Action: Codable, Equatable, Sendable { case increment }
    static let name = "routed"
    var initialState: State { State() }

    func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
      state.count += 1
      return .none
    }

    /// Stores whose wire actions went through this witness, by store id.
    @StateActor static var routed: [String: Int] = [:]

    @StateActor
    static func _send(wire action: JSON, cause: JSON?, to store: Store<Self>)
      throws(ActionError) -> Transaction
    {
      routed[store.id, default: 0] += 1
      return try store.receive(wire: action, cause: cause)
    }
  }

  @Test func wireActionsGoThroughTheFeaturesWitness() throws {
    let store = try Routed().descriptor().makeStore("routed-1", nil, nil)
    var patches: [[JSON]] = []
    store.observer = { patches.append($0.patch) }
    _ = try store.send(wire: ["type": "increment"], cause: nil)
    _ = try store.send(wire: ["type": "increment"], cause: nil)
    #expect(Routed.routed["routed-1"] == 2)
    #expect(store.published == ["count": 2])
    #expect(
      patches == [
        [["op": "replace", "path": "/count", "value": 1]],
        [["op": "replace", "path": "/count", "value": 2]],
      ])
  }

  @Test func refusalsComeBackThroughTheWitness() {
    let store = Store(feature: Routed(), id: "routed-2")
    do {
      _ = try store.send(wire: ["type": "nope"], cause: nil)
      Issue.record("an unknown action type was accepted")
    } catch {
      #expect(error.code == -32003)
    }
    #expect(Routed.routed["routed-2"] == 1)
    #expect(store.version == 0)
  }
}

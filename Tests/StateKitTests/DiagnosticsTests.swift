import Synchronization
import Testing

@testable import StateKit

/// An effect that throws with no catch handler: a programming error StateKit reports.
private struct Careless: Feature {
  struct State: Codable, Equatable, Sendable {}
  enum Action: Codable, Equatable, Sendable { case go }
  struct Oops: Error {}

  static let name = "careless-diagnostics-probe"

  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    .run { _ in throw Oops() }
  }
}

@StateActor
@Suite struct DiagnosticsTests {
  /// The server routes diagnostics into its log (a queue that never blocks on an unread
  /// stderr); whatever sink is routed to must receive them, not fd 2.
  @Test func anUncaughtEffectErrorReachesTheRoutedSink() async {
    let received = Mutex<[String]>([])
    Diagnostics.route { message in received.withLock { $0.append(message) } }
    defer { Diagnostics.routeToStandardError() }
    let store = Store(feature: Careless())
    await store.settled(store.send(.go))
    store.close()
    let mine = received.withLock { $0 }.filter { $0.contains(Careless.name) }
    #expect(mine.count == 1)
    #expect(mine.first?.contains("has no catch handler") == true)
  }
}

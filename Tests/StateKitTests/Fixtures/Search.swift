import StateKit
import StateKitTesting

/// A search service that answers after a per-query delay on a test clock, and ignores
/// cancellation on purpose: it returns its (stale) answer anyway, so the tests prove that
/// the store, not the service, discards it.
actor SearchService {
  private(set) var requests: [String] = []
  let clock: TestClock
  let delays: [String: Duration]
  let catalog = ["calendar", "camera", "car", "cat"]

  init(clock: TestClock, delays: [String: Duration] = [:]) {
    self.clock = clock
    self.delays = delays
  }

  func search(_ query: String) async -> [String] {
    requests.append(query)
    try? await clock.sleep(for: delays[query] ?? .milliseconds(100))
    return catalog.filter { $0.hasPrefix(query) }
  }
}

/// Search as you type: a 300 ms debounce, and a reply that can never land stale.
struct Search: Feature {
  struct State: Codable, Equatable, Sendable {
    var query = ""
    var results: [String] = []
    var isSearching = false
  }
  enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    case queryChanged(query: String)
    case `internal`(Internal)

    /// The search effect's answer.
    enum Internal: Codable, Equatable, Sendable {
      case results(query: String, items: [String])
    }
  }
  enum CancelID { case search }

  static let name = "search"

  let service: SearchService
  let clock: any Clock<Duration>

  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .queryChanged(let query):
      state.query = query
      state.isSearching = true
      return .run { [service] send in
        let items = await service.search(query)
        await send(.internal(.results(query: query, items: items)))
      }
      .debounce(id: CancelID.search, for: .milliseconds(300), clock: clock)
    case .internal(.results(_, let items)):
      state.results = items
      state.isSearching = false
      return .none
    }
  }

  static let allActions: [Action] = [
    .queryChanged(query: "ca"), .internal(.results(query: "ca", items: ["car", "cat"])),
  ]
}

import StateKit

extension UsersFeature {
  /// The load, the list, the search and the selection.
  public struct State: Codable, Equatable, Sendable {
    /// Where the list stands with the server.
    public var load: LoadState
    public var users: IdentifiedArray<User>
    /// The search box as typed; `results` answer its trimmed form.
    public var query: String
    /// The users answering `query` (everyone for an empty query).
    public var results: IdentifiedArray<User>
    /// True while a search for `query` is debouncing or in flight.
    public var searching: Bool
    /// The selected user's id, if that user exists.
    public var selectedId: Int?

    /// A state; empty and idle by default.
    public init(
      load: LoadState = LoadState(), users: IdentifiedArray<User> = [], query: String = "",
      results: IdentifiedArray<User> = [], searching: Bool = false, selectedId: Int? = nil
    ) {
      self.load = load
      self.users = users
      self.query = query
      self.results = results
      self.searching = searching
      self.selectedId = selectedId
    }
  }

  /// The published state: the state plus `selected`, the selected user itself.
  public struct View: Codable, Equatable, Sendable {
    public var load: LoadState
    public var users: IdentifiedArray<User>
    public var query: String
    public var results: IdentifiedArray<User>
    public var searching: Bool
    public var selectedId: Int?
    public var selected: User?

    init(_ state: State) {
      load = state.load
      users = state.users
      query = state.query
      results = state.results
      searching = state.searching
      selectedId = state.selectedId
      selected = state.selectedId.flatMap { state.users[id: $0] }
    }
  }

  /// What a client may do with the list, and the results the effects send back.
  public enum Action: Codable, Equatable, Sendable {
    /// Loads the users unless they are loaded or loading.
    case load
    /// Loads again, cancelling a load in flight.
    case refresh
    /// Loads again after a failure.
    case retry
    /// Searches on the backend after 300 ms without a new query; empty shows everyone.
    case search(query: String)
    case select(id: Int)
    case deselect
    case delete(id: Int)

    // Internal: results of effects.
    case loaded(users: [User])
    case loadFailed(message: String, recoverable: Bool)
    case searchAnswered(query: String, users: [User])
    case searchFailed(query: String)
    case deleteFailed(id: Int)
  }
}

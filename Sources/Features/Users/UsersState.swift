import JSON
import StateKit

extension UsersFeature {
  /// Where the list shown came from.
  public enum Source: String, Codable, Sendable, CaseIterable {
    /// The backend's primary endpoint, in this run.
    case network
    /// The backend's fallback endpoint, after the primary failed its retries.
    case fallback
    /// The saved state of an earlier run, not yet revalidated.
    case cache
  }

  /// Which side of a conflicting rename to keep.
  public enum Keep: String, Codable, Sendable, CaseIterable {
    case local, server
  }

  /// The load, the list, the search, the selection and the local edits. Persisted: the list
  /// with its fetch time is the cache the next run starts from.
  public struct State: Codable, Equatable, Sendable {
    /// Where the list stands with the server.
    public var load: LoadState
    /// Where the list came from; `null` before the first load.
    public var source: Source?
    /// The list shown: the server's copies, with pending local renames applied.
    public var users: IdentifiedArray<User>
    /// The search box as typed; `results` answer its trimmed form.
    public var query: String
    /// The users answering `query` (everyone for an empty query).
    public var results: IdentifiedArray<User>
    /// True while a search for `query` is debouncing or in flight.
    public var searching: Bool
    /// The selected user's id, if that user exists.
    public var selectedId: Int?
    /// Local renames the server has not confirmed, by user id.
    public var edits: IdentifiedArray<UserEdit>
    /// Why the last rename failed on the server and was rolled back, for a person; `null`
    /// again at the next rename.
    public var renameError: String?

    /// A state; empty and idle by default.
    public init(
      load: LoadState = LoadState(), source: Source? = nil, users: IdentifiedArray<User> = [],
      query: String = "", results: IdentifiedArray<User> = [], searching: Bool = false,
      selectedId: Int? = nil, edits: IdentifiedArray<UserEdit> = [], renameError: String? = nil
    ) {
      self.load = load
      self.source = source
      self.users = users
      self.query = query
      self.results = results
      self.searching = searching
      self.selectedId = selectedId
      self.edits = edits
      self.renameError = renameError
    }

    private enum CodingKeys: String, CodingKey {
      case load, source, users, query, results, searching, selectedId, edits, renameError
    }

    /// Whether this state, decoded from `saved`, is another than the one saved
    /// (`UsersFeature.decodingChanged(_:from:)`). `init(from:)` settles the load, the source,
    /// the search and the edits; the lists and the rest are read as written. So the state is
    /// the one saved when those four parts are: compared alone, whatever the number of users.
    /// `nil` for a saved state with a member the synthesized `encode(to:)` does not write or
    /// without one it always writes, which it did not write.
    func differs(from saved: JSON) -> Bool? {
      let always: [CodingKeys] = [.load, .users, .query, .results, .searching, .edits]
      guard let members = saved.objectValue,
        members.keys.allSatisfy({ CodingKeys(stringValue: $0) != nil }),
        always.allSatisfy({ members[$0.stringValue] != nil })
      else { return nil }
      return
        !(UsersFeature.decoded(load, isSaved: members["load"])
        && UsersFeature.decoded(source, isSaved: members["source"])
        && UsersFeature.decoded(searching, isSaved: members["searching"])
        && UsersFeature.decoded(edits, isSaved: members["edits"]))
    }

    /// Decodes a saved state (the cache) or a client's initial one. Nothing in flight survives
    /// the process that ran it, and a list read back is the cache's: a load saved `loading`
    /// comes back `loaded` (or `idle` if it never loaded), a search stops, an edit being
    /// sent is pending again, and the source is `cache`.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      var load = try container.decodeIfPresent(LoadState.self, forKey: .load) ?? LoadState()
      if load.status == .loading { load.status = load.lastUpdated == nil ? .idle : .loaded }
      var edits =
        try container.decodeIfPresent(IdentifiedArray<UserEdit>.self, forKey: .edits) ?? []
      for edit in edits where edit.status == .sending {
        edits.modify(id: edit.id) { $0.status = .pending }
      }
      let source = try container.decodeIfPresent(Source.self, forKey: .source)
      self.init(
        load: load, source: source == nil ? nil : .cache,
        users: try container.decodeIfPresent(IdentifiedArray<User>.self, forKey: .users) ?? [],
        query: try container.decodeIfPresent(String.self, forKey: .query) ?? "",
        results: try container.decodeIfPresent(IdentifiedArray<User>.self, forKey: .results)
          ?? [],
        searching: false,
        selectedId: try container.decodeIfPresent(Int.self, forKey: .selectedId),
        edits: edits,
        renameError: try container.decodeIfPresent(String.self, forKey: .renameError))
    }
  }

  /// The published state: the state plus `selected`, the selected user itself.
  public struct View: Codable, Equatable, Sendable {
    public var load: LoadState
    public var source: Source?
    public var users: IdentifiedArray<User>
    public var query: String
    public var results: IdentifiedArray<User>
    public var searching: Bool
    public var selectedId: Int?
    public var selected: User?
    public var edits: IdentifiedArray<UserEdit>
    public var renameError: String?

    init(_ state: State) {
      load = state.load
      source = state.source
      users = state.users
      query = state.query
      results = state.results
      searching = state.searching
      selectedId = state.selectedId
      selected = state.selectedId.flatMap { state.users[id: $0] }
      edits = state.edits
      renameError = state.renameError
    }
  }

  /// What a client may do with the list, and the results the effects send back.
  public enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    /// Loads the users unless they are loading, or loaded in this run (from the network or
    /// the fallback) and still fresh; a cached or stale list stays shown while it reloads.
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
    /// Renames a user locally at once; pending until the server confirms it. Blank names are
    /// refused.
    case rename(id: Int, name: String)
    /// Ends a conflict by keeping the local name (sent again) or the server's.
    case resolveConflict(id: Int, keep: Keep)
    /// Sent by the feature itself; a client's is refused (-32003).
    case `internal`(Internal)

    /// The start from the cache, and the results of effects and of the server's pushes.
    public enum Internal: Codable, Equatable, Sendable {
      /// The store was restored from the cache: check its age against the time to live.
      case restored
      /// The list reached `expiresAt`: the expiry timer set by the last load fired.
      case expired
      case loaded(users: [User], source: Source)
      case loadFailed(message: String, recoverable: Bool)
      case searchAnswered(query: String, users: [User])
      case searchFailed(query: String)
      case deleteFailed(id: Int)
      /// The server pushed a user someone else changed.
      case serverChanged(user: User)
      /// The server accepted the rename of `id` to `name` made on `baseVersion`.
      case renamed(id: Int, name: String, baseVersion: Int, user: User)
      /// The server refused the rename made on `baseVersion`: it has `serverName` at
      /// `serverVersion`.
      case renameConflicted(id: Int, baseVersion: Int, serverName: String, serverVersion: Int)
      /// The rename could not be sent (offline: it stays pending), or the user is gone from
      /// the server (`gone`).
      case renameFailed(id: Int, baseVersion: Int, gone: Bool)
      /// The server failed the rename of `id` to `name` after the retries: rolled back, with
      /// `message` shown as `renameError`.
      case renameRefused(id: Int, name: String, baseVersion: Int, message: String)
    }
  }
}

import FoundationEssentials
import JSON
import StateKit

/// A directory of people from the backend: start from the cache and revalidate, load with
/// retries and a fallback source, debounced search whose stale replies never land, selection,
/// refresh, delete, and local renames reconciled with the server by version.
///
/// Rules worth copying: the list is persisted with its fetch time, so a restart shows it at
/// once (`source: cache`), marked stale past its time to live, and `load` revalidates it
/// without blanking it; a failed load is retried 3 times with backoff, then the fallback
/// endpoint is tried, and only then a safe, recoverable message shows while the last good list
/// stays, marked stale; `refresh` cancels a load in flight; a reply for an older query is
/// dropped; `delete` updates users, results and selection in one step. Server copies, local
/// renames and the cache are reconciled per user by version (`UsersFeature+Edits.swift`).
public struct UsersFeature: Feature {
  public static let name = "users"
  public static let isPersistent = true
  /// 2: users carry their server version, and the state its source and local edits. Version 1
  /// snapshots (stores opened with `persist: true` before) are set aside, not misread.
  public static let schemaVersion = 2

  /// How long the search box must be quiet before a search is sent.
  public static let searchDebounce = Duration.milliseconds(300)
  /// How long a loaded list counts as fresh, unless the feature is given another.
  public static let defaultTimeToLive = Duration.seconds(300)

  let backend: Backend
  let clock: any Clock<Duration>
  let wallClock: WallClock
  let backoff: Backoff
  let timeToLive: Duration

  /// Users from `backend`; debounce and retries wait on `clock`, `lastUpdated` and the age of
  /// the cached list read `wallClock`; a list older than `timeToLive` is stale.
  public init(
    backend: Backend, clock: any Clock<Duration>, wallClock: WallClock = .system,
    backoff: Backoff = Backoff(base: .milliseconds(200), retries: 3),
    timeToLive: Duration = UsersFeature.defaultTimeToLive
  ) {
    self.backend = backend
    self.clock = clock
    self.wallClock = wallClock
    self.backoff = backoff
    self.timeToLive = timeToLive
  }

  enum CancelID { case load, search, expiry }

  /// What a restart settles (a load, a search, an edit in flight; the source becomes the
  /// cache), and only that (`State.differs(from:)`).
  public static func decodingChanged(_ state: State, from saved: JSON) -> Bool? {
    state.differs(from: saved)
  }

  public var initialState: State { State() }

  public func view(of state: State) -> View { View(state) }

  public func validate(_ action: Action) throws(ActionValidationError) {
    if case .rename(_, let name) = action, Self.trimmed(name).isEmpty {
      throw ActionValidationError(pointer: "/name", reason: "expected a non-blank name")
    }
  }

  public func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .load:
      switch state.load.status {
      case .idle, .failed:
        return startLoad(&state)
      case .loading:
        return .none
      case .loaded:
        // Stale-while-revalidate: a cached or expired list stays on screen while it reloads.
        markStaleIfExpired(&state)
        guard state.source == .cache || state.load.isStale else { return .none }
        return startLoad(&state)
      }

    case .refresh:
      return startLoad(&state)

    case .retry:
      guard state.load.status == .failed else { return .none }
      return startLoad(&state)

    case .internal(.restored):
      refreshExpiry(&state)
      markStaleIfExpired(&state)
      return expiryTimer(state)

    case .internal(.expired):
      // Only a list that was loaded ages; a load since restarted the timer.
      if state.load.lastUpdated != nil { state.load.isStale = true }
      return .none

    case .internal(.loaded(let users, let source)):
      let now = wallClock.now()
      state.load = LoadState(status: .loaded, lastUpdated: now, expiresAt: expiry(of: now))
      state.source = source
      let send = merge(serverList: users, into: &state)
      if !Self.trimmed(state.query).isEmpty {
        // A search answered before this load may name users that are gone now.
        state.results = IdentifiedArray(
          state.results.compactMap { state.users[id: $0.id] })
      } else {
        state.results = state.users
      }
      if let id = state.selectedId, state.users[id: id] == nil { state.selectedId = nil }
      return .merge(send, expiryTimer(state))

    case .internal(.loadFailed(let message, let recoverable)):
      state.load.status = .failed
      state.load.error = LoadState.Failure(message: message, recoverable: recoverable)
      state.load.isStale = !state.users.isEmpty
      return .none

    case .search(let query):
      state.query = query
      let trimmed = Self.trimmed(query)
      guard !trimmed.isEmpty else {
        state.results = state.users
        state.searching = false
        return .cancel(id: CancelID.search)
      }
      state.searching = true
      return .run { [backend] send in
        let found = try await backend.searchUsers(query: trimmed)
        await send(.internal(.searchAnswered(query: query, users: found)))
      } catch: { _, send in
        await send(.internal(.searchFailed(query: query)))
      }
      .debounce(id: CancelID.search, for: Self.searchDebounce, clock: clock)

    case .internal(.searchAnswered(let query, let users)):
      // Belt and braces: the debounce cancels older searches, and a reply that still
      // arrives for an older query is dropped here.
      guard query == state.query else { return .none }
      state.searching = false
      let known = state.load.status == .loaded || state.load.isStale
      // Known users show as the list holds them: local renames applied, one copy per user.
      state.results = IdentifiedArray(
        users.compactMap { known ? state.users[id: $0.id] : $0 })
      return .none

    case .internal(.searchFailed(let query)):
      guard query == state.query else { return .none }
      // The server could not search: search what is already here rather than show nothing.
      state.searching = false
      let trimmed = Self.trimmed(query)
      state.results = IdentifiedArray(state.users.filter { $0.matches(trimmed) })
      return .none

    case .select(let id):
      state.selectedId = state.users[id: id] == nil ? nil : id
      return .none

    case .deselect:
      state.selectedId = nil
      return .none

    case .delete(let id):
      guard state.users[id: id] != nil || state.results[id: id] != nil else { return .none }
      state.users.remove(id: id)
      state.results.remove(id: id)
      state.edits.remove(id: id)
      if state.selectedId == id { state.selectedId = nil }
      return .run { [backend] _ in
        try await backend.deleteUser(id: id)
      } catch: { error, send in
        // Already gone on the server is what we wanted; anything else: show the truth again.
        if (error as? BackendError) != .notFound { await send(.internal(.deleteFailed(id: id))) }
      }

    case .internal(.deleteFailed):
      return startLoad(&state)

    case .rename(let id, let name):
      return rename(id: id, to: name, &state)

    case .resolveConflict(let id, let keep):
      return resolveConflict(id: id, keep: keep, &state)

    case .internal(.serverChanged(let user)):
      // A push for a user not in the list (not loaded yet, or deleted here) waits for a load.
      guard state.users[id: user.id] != nil else { return .none }
      reconcile(serverCopy: user, &state)
      return .none

    case .internal(.renamed(let id, let name, let baseVersion, let user)):
      return renamed(id: id, name: name, baseVersion: baseVersion, user: user, &state)

    case .internal(.renameConflicted(let id, let baseVersion, let serverName, let serverVersion)):
      guard var server = state.users[id: id] else { return .none }
      server.name = serverName
      server.version = serverVersion
      if state.edits[id: id]?.baseVersion == baseVersion {
        state.edits.modify(id: id) { if $0.status == .sending { $0.status = .pending } }
      }
      reconcile(serverCopy: server, &state)
      return .none

    case .internal(.renameRefused(let id, let name, let baseVersion, let message)):
      return renameRefused(
        id: id, name: name, baseVersion: baseVersion, message: message, &state)

    case .internal(.renameFailed(let id, let baseVersion, let gone)):
      guard let edit = state.edits[id: id], edit.baseVersion == baseVersion,
        edit.status == .sending
      else { return .none }
      if gone {
        // Deleted on the server: nothing left to rename, and the next load drops the user.
        state.edits.remove(id: id)
      } else {
        state.edits.modify(id: id) { $0.status = .pending }
      }
      return .none
    }
  }

  static func trimmed(_ text: String) -> String {
    text.trimmingCharacters(in: .whitespacesAndNewlines)
  }
}

import Foundation
import StateKit

/// A directory of people from the backend: load with retries, debounced search whose stale
/// replies never land, selection, refresh and delete.
///
/// Rules worth copying: a failed load is retried 3 times with backoff and then shows a safe,
/// recoverable message while keeping the last good list marked stale; `refresh` cancels a
/// load in flight; a reply for an older query is dropped (cancelled, and checked against the
/// current query); `delete` updates users, results and selection in one step.
public struct UsersFeature: Feature {
  public static let name = "users"
  public static let publicActions = [
    "load", "refresh", "retry", "search", "select", "deselect", "delete",
  ]

  /// How long the search box must be quiet before a search is sent.
  public static let searchDebounce = Duration.milliseconds(300)

  let backend: Backend
  let clock: any Clock<Duration>
  let wallClock: WallClock
  let backoff: Backoff

  /// Users from `backend`; debounce and retries wait on `clock`, `lastUpdated` reads
  /// `wallClock`.
  public init(
    backend: Backend, clock: any Clock<Duration>, wallClock: WallClock = .system,
    backoff: Backoff = Backoff(base: .milliseconds(200), retries: 3)
  ) {
    self.backend = backend
    self.clock = clock
    self.wallClock = wallClock
    self.backoff = backoff
  }

  enum CancelID { case load, search }

  public var initialState: State { State() }

  public func view(of state: State) -> View { View(state) }

  public func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .load:
      guard state.load.status == .idle || state.load.status == .failed else { return .none }
      return startLoad(&state)

    case .refresh:
      return startLoad(&state)

    case .retry:
      guard state.load.status == .failed else { return .none }
      return startLoad(&state)

    case .loaded(let users):
      state.users = IdentifiedArray(users)
      state.load = LoadState(status: .loaded, lastUpdated: wallClock.timestamp())
      if !Self.trimmed(state.query).isEmpty {
        // A search answered before this load may name users that are gone now.
        state.results = IdentifiedArray(state.results.filter { state.users[id: $0.id] != nil })
      } else {
        state.results = state.users
      }
      if let id = state.selectedId, state.users[id: id] == nil { state.selectedId = nil }
      return .none

    case .loadFailed(let message, let recoverable):
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
        await send(.searchAnswered(query: query, users: found))
      } catch: { _, send in
        await send(.searchFailed(query: query))
      }
      .debounce(id: CancelID.search, for: Self.searchDebounce, clock: clock)

    case .searchAnswered(let query, let users):
      // Belt and braces: the debounce cancels older searches, and a reply that still
      // arrives for an older query is dropped here.
      guard query == state.query else { return .none }
      state.searching = false
      let known = state.load.status == .loaded || state.load.isStale
      state.results = IdentifiedArray(users.filter { !known || state.users[id: $0.id] != nil })
      return .none

    case .searchFailed(let query):
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
      if state.selectedId == id { state.selectedId = nil }
      return .run { [backend] _ in
        try await backend.deleteUser(id: id)
      } catch: { error, send in
        // Already gone on the server is what we wanted; anything else: show the truth again.
        if (error as? BackendError) != .notFound { await send(.deleteFailed(id: id)) }
      }

    case .deleteFailed:
      return startLoad(&state)
    }
  }

  private func startLoad(_ state: inout State) -> Effect<Action, Never> {
    state.load.status = .loading
    state.load.error = nil
    return .run { [backend, clock, backoff] send in
      let users = try await backoff.run(clock: clock) { try await backend.listUsers() }
      await send(.loaded(users: users))
    } catch: { error, send in
      await send(
        .loadFailed(
          message: SafeMessage.describing(error, doing: "load users"),
          recoverable: SafeMessage.isRecoverable(error)))
    }
    .cancellable(id: CancelID.load, cancelInFlight: true)
  }

  static func trimmed(_ text: String) -> String {
    text.trimmingCharacters(in: .whitespacesAndNewlines)
  }
}

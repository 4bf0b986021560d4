import StateKit

/// A typed navigation stack as state that reads the users from the `users` store: push, pop,
/// and deep links to a user's screen.
///
/// The stack keeps no copy of the users: `push userDetail` and `openURL "app://users/42"` look
/// the user up in `users` (a ``Shared`` handle) as it is now, and push the screen only when the
/// user exists there; an unknown user, or an unknown or malformed URL, emits `toast` and leaves
/// the path alone. The user on the top screen is kept as read then (`shownUser`), with the
/// `users` version it was read at.
public struct NavigationFeature: Feature {
  /// The stack of screens and the user shown on top.
  public struct State: Codable, Equatable, Sendable {
    public var path: [Destination]
    /// The user of the top screen, as `users` held it when that screen was last pushed or
    /// uncovered; `null` when the top screen is not a user's.
    public var shownUser: User?
    /// The version of the `users` store `shownUser` was read at; `null` with it.
    public var usersVersion: UInt64?

    public init(path: [Destination] = [], shownUser: User? = nil, usersVersion: UInt64? = nil) {
      self.path = path
      self.shownUser = shownUser
      self.usersVersion = usersVersion
    }
  }

  /// Stack operations and deep links.
  public enum Action: Codable, Equatable, Sendable {
    case push(destination: Destination)
    case pop
    case popToRoot
    case openURL(url: String)
  }

  /// `toast` when a URL or a destination cannot be opened.
  public enum Event: Codable, Equatable, Sendable {
    case toast(message: String)
  }

  public static let name = "navigation"

  /// The users this stack opens screens for: the `users` store's state.
  public let users: Shared<UsersFeature.State>

  /// A navigation stack reading the users from `users`: the `users` store by default, bound by
  /// the server; a test gives a fixed `Shared(fixed: state, version:)`.
  public init(users: Shared<UsersFeature.State> = Shared(UsersFeature.self)) {
    self.users = users
  }

  public var dependencies: [SharedDependency] { [users.dependency] }

  public var initialState: State { State() }

  public func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
    switch action {
    case .push(.userDetail(let id)):
      guard let user = users.current?.value.users[id: id] else {
        return .emit(.toast(message: "User \(id) does not exist."))
      }
      state.path.append(.userDetail(userId: user.id))
      showTop(&state)
      return .none

    case .push(.settings):
      state.path.append(.settings)
      showTop(&state)
      return .none

    case .pop:
      if !state.path.isEmpty { state.path.removeLast() }
      showTop(&state)
      return .none

    case .popToRoot:
      state.path.removeAll()
      showTop(&state)
      return .none

    case .openURL(let url):
      guard let destination = Destination(url: url) else {
        return .emit(.toast(message: "Cannot open \(url)."))
      }
      guard case .userDetail(let id) = destination else {
        if state.path.last != destination { state.path.append(destination) }
        showTop(&state)
        return .none
      }
      guard let shared = users.current else {
        return .emit(.toast(message: "Cannot open user \(id): the users store is not open."))
      }
      guard shared.value.load.status == .loaded || !shared.value.users.isEmpty else {
        return .emit(.toast(message: "Cannot open user \(id): the users are not loaded yet."))
      }
      guard shared.value.users[id: id] != nil else {
        return .emit(.toast(message: "User \(id) does not exist."))
      }
      if state.path.last != .userDetail(userId: id) { state.path.append(.userDetail(userId: id)) }
      showTop(&state)
      return .none
    }
  }

  /// Reads the top screen's user from `users` now, with the version it was read at.
  private func showTop(_ state: inout State) {
    guard case .userDetail(let id) = state.path.last, let shared = users.current else {
      state.shownUser = nil
      state.usersVersion = nil
      return
    }
    state.shownUser = shared.value.users[id: id]
    state.usersVersion = shared.version
  }
}

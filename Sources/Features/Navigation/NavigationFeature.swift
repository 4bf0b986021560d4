import StateKit

/// A typed navigation stack as state, composed with `users` as a child: push, pop, and deep
/// links that load what they need first.
///
/// `openURL "app://users/42"` loads the users if needed, selects 42 and pushes its detail
/// only once it exists; an unknown or malformed URL emits `toast` and leaves the path alone.
public struct NavigationFeature: Feature {
  /// The embedded users state and the stack of screens.
  public struct State: Codable, Equatable, Sendable {
    public var users: UsersFeature.State
    public var path: [Destination]
    /// A deep link's user waiting for the users to load. Private.
    public var pendingUserId: Int?

    public init(
      users: UsersFeature.State = UsersFeature.State(), path: [Destination] = [],
      pendingUserId: Int? = nil
    ) {
      self.users = users
      self.path = path
      self.pendingUserId = pendingUserId
    }
  }

  /// The published navigation: the users view and the path.
  public struct View: Codable, Equatable, Sendable {
    public var users: UsersFeature.View
    public var path: [Destination]
  }

  /// Stack operations, deep links, and the child's actions.
  public enum Action: Codable, Equatable, Sendable {
    case push(destination: Destination)
    case pop
    case popToRoot
    case openURL(url: String)
    /// An action of the embedded `users` feature, in its wire shape.
    case users(action: ChildAction<UsersFeature>)
  }

  /// `toast` when a URL or a destination cannot be opened.
  public enum Event: Codable, Equatable, Sendable {
    case toast(message: String)
  }

  public static let name = "navigation"

  let users: Scope<NavigationFeature, UsersFeature>

  /// A navigation stack embedding `users` as its child.
  public init(users: UsersFeature) {
    self.users = Scope(
      state: \.users,
      action: ActionPath(
        embed: { .users(action: ChildAction($0)) },
        extract: { if case .users(let child) = $0 { child.action } else { nil } }),
      child: users)
  }

  public var initialState: State { State() }

  public func view(of state: State) -> View {
    View(users: users.child.view(of: state.users), path: state.path)
  }

  public func validate(_ action: Action) throws(ActionValidationError) {
    guard case .users(let child) = action else { return }
    do {
      try users.child.validate(child.action)
    } catch {
      throw ActionValidationError(pointer: "/action" + error.pointer, reason: error.reason)
    }
  }

  public func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
    if let effect = users.reduce(into: &state, action: action) {
      guard case .users(let child) = action else { return effect }
      return .merge(effect, followUp(&state, after: child.action))
    }
    switch action {
    case .push(.userDetail(let id)):
      guard state.users.users[id: id] != nil else {
        return .emit(.toast(message: "User \(id) does not exist."))
      }
      state.path.append(.userDetail(userId: id))
      return .none

    case .push(.settings):
      state.path.append(.settings)
      return .none

    case .pop:
      if !state.path.isEmpty { state.path.removeLast() }
      return .none

    case .popToRoot:
      state.path.removeAll()
      return .none

    case .openURL(let url):
      guard let destination = Destination(url: url) else {
        return .emit(.toast(message: "Cannot open \(url)."))
      }
      guard case .userDetail(let id) = destination else {
        if state.path.last != destination { state.path.append(destination) }
        return .none
      }
      guard state.users.load.status == .loaded else {
        // Wait for the list; the load's outcome finishes the link (see `followUp`).
        state.pendingUserId = id
        return reduce(into: &state, action: .users(action: ChildAction(.load)))
      }
      return open(userId: id, &state)

    case .users:
      return .none  // reduced by the scope above
    }
  }

  /// What the parent does once the child reduced one of its actions: finish a deep link when
  /// the users arrive, and drop screens of a deleted user.
  private func followUp(_ state: inout State, after child: UsersFeature.Action)
    -> Effect<Action, Event>
  {
    switch child {
    case .internal(.loaded):
      guard let id = state.pendingUserId else { return .none }
      state.pendingUserId = nil
      return open(userId: id, &state)
    case .internal(.loadFailed(let message, _)):
      guard let id = state.pendingUserId else { return .none }
      state.pendingUserId = nil
      return .emit(.toast(message: "Cannot open user \(id): \(message)"))
    case .delete(let id):
      if let index = state.path.firstIndex(of: .userDetail(userId: id)) {
        state.path.removeSubrange(index...)
      }
      return .none
    default:
      return .none
    }
  }

  /// Selects user `id` through the child, then pushes its detail, if the user exists.
  private func open(userId id: Int, _ state: inout State) -> Effect<Action, Event> {
    guard state.users.users[id: id] != nil else {
      return .emit(.toast(message: "User \(id) does not exist."))
    }
    let select = reduce(into: &state, action: .users(action: ChildAction(.select(id: id))))
    if state.path.last != .userDetail(userId: id) { state.path.append(.userDetail(userId: id)) }
    return select
  }
}

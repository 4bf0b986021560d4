import StateKit

/// The reference application: every feature of `Sources/Features`, wired to one simulated
/// backend, ready for the server to register.
///
/// ```swift
/// let backend = Backend(seed: 7, latencyMs: 50, clock: ContinuousClock())
/// for descriptor in Features.all(backend: backend, clock: ContinuousClock()) {
///   server.register(descriptor)
/// }
/// ```
public enum Features {
  /// The descriptors of `backend`, `counter`, `users`, `cart`, `profile`, `notes` and
  /// `navigation` (which reads the `users` store), sharing `backend`; effects wait on `clock`,
  /// timestamps come from `wallClock`, and a users list older than `usersTimeToLive` is stale.
  public static func all(
    backend: Backend, clock: any Clock<Duration>, wallClock: WallClock = .system,
    usersTimeToLive: Duration = UsersFeature.defaultTimeToLive
  ) -> [FeatureDescriptor] {
    let users = UsersFeature(
      backend: backend, clock: clock, wallClock: wallClock, timeToLive: usersTimeToLive)
    return [
      backendDescriptor(backend),
      CounterFeature(clock: clock).descriptor(),
      usersDescriptor(users, backend: backend),
      CartFeature(backend: backend).descriptor(),
      ProfileFeature(backend: backend).descriptor(),
      NotesFeature(backend: backend, clock: clock, wallClock: wallClock).descriptor(),
      NavigationFeature().descriptor(),
    ]
  }

  /// The `users` feature, whose stores hear the server's pushes (`remoteUserEdit`) for as long
  /// as they exist, and check a list restored from the cache against the time to live as they
  /// open, so the first `state/get` already says whether it is stale.
  static func usersDescriptor(_ users: UsersFeature, backend: Backend) -> FeatureDescriptor {
    var descriptor = users.descriptor()
    let makeStore = descriptor.makeStore
    descriptor.makeStore = { id, initial, restoring throws(ActionError) in
      let store = try makeStore(id, initial, restoring)
      if let store = store as? Store<UsersFeature> {
        // Reduced before the server attaches its observer: the store opens at the version
        // after it, with nothing published that a client could have missed.
        if restoring != nil { store.send(.internal(.restored)) }
        backend.observeUsers { [weak store] user in
          guard let store else { return false }
          store.send(.internal(.serverChanged(user: user)))
          return true
        }
      }
      return store
    }
    return descriptor
  }

  /// The `backend` feature, whose stores follow the actor: each store made subscribes to the
  /// backend's changes (request counts, settings) for as long as it exists.
  static func backendDescriptor(_ backend: Backend) -> FeatureDescriptor {
    var descriptor = BackendFeature(backend: backend, initial: backend.initialStatus).descriptor()
    let makeStore = descriptor.makeStore
    descriptor.makeStore = { id, initial, restoring throws(ActionError) in
      let store = try makeStore(id, initial, restoring)
      if let store = store as? Store<BackendFeature> {
        backend.observe { [weak store] status in
          guard let store else { return false }
          store.send(.internal(.statusChanged(status: status)))
          return true
        }
      }
      return store
    }
    return descriptor
  }
}

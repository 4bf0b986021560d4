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
  /// `navigation`, sharing `backend`; effects wait on `clock` and timestamps come from
  /// `wallClock`.
  public static func all(
    backend: Backend, clock: any Clock<Duration>, wallClock: WallClock = .system
  ) -> [FeatureDescriptor] {
    [
      backendDescriptor(backend),
      CounterFeature(clock: clock).descriptor(),
      UsersFeature(backend: backend, clock: clock, wallClock: wallClock).descriptor(),
      CartFeature(backend: backend).descriptor(),
      ProfileFeature(backend: backend).descriptor(),
      NotesFeature(backend: backend, clock: clock, wallClock: wallClock).descriptor(),
      NavigationFeature(users: UsersFeature(backend: backend, clock: clock, wallClock: wallClock))
        .descriptor(),
    ]
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
          store.send(.statusChanged(status: status))
          return true
        }
      }
      return store
    }
    return descriptor
  }
}

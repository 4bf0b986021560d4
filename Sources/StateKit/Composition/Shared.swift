/// A read-only handle on another store's state: written in one place (its own store, by its own
/// reducer), read by any feature that declares it. The state is never copied into the reader's
/// state, so the reader cannot drift from it.
///
/// A feature keeps the handle as a dependency (a stored property, like its clock), lists it in
/// ``Feature/dependencies``, and reads ``current`` in `reduce`. The server binds every declared
/// handle to the open stores when it starts (it refuses to start when a named store is missing
/// or holds another feature); a test gives the feature a fixed value instead.
///
/// ```swift
/// struct Navigation: Feature {
///   let users: Shared<UsersFeature.State>        // Shared(UsersFeature.self) in the app
///   var dependencies: [SharedDependency] { [users.dependency] }
///   func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
///     guard let users = users.current, users.value.users[id: id] != nil else { ... }
///   }
/// }
/// // In a test: Navigation(users: Shared(fixed: UsersFeature.State(), version: 3))
/// ```
///
/// Each read is consistent at a version: stores reduce one action at a time on the state actor,
/// so a read never sees half of another store's reduce, and the state read is one its
/// published ``Snapshot/version`` names (private fields may change without a new version,
/// since the version counts changes of the view). A read is an input of the reduce, like its
/// time (``ReduceTime``): `stateserver replay` binds the handles to the replayed stores, whose
/// entries it reduces in the recorded order, so a recording replays to the same patches; a
/// history skip that reduces later actions again reads the other store as it is now.
public struct Shared<Value: Sendable>: Sendable {
  /// The other store's state and the version it published with it.
  public struct Snapshot: Sendable {
    public var value: Value
    /// The other store's version when this state was read.
    public var version: UInt64

    public init(value: Value, version: UInt64) {
      self.value = value
      self.version = version
    }
  }

  /// What the server binds: the store id and feature this handle reads.
  public let dependency: SharedDependency
  private let read: @Sendable () -> Snapshot?

  /// A handle on the store `id` of feature `F` (its default store, named after the feature,
  /// unless told otherwise). Reads nil until the server binds it, and while that store is
  /// closed.
  public init<F: Feature>(_ feature: F.Type, store id: String = F.name) where Value == F.State {
    let link = SharedLink()
    dependency = SharedDependency(storeID: id, featureName: F.name, link: link)
    read = {
      // `reduce` is not isolated in the protocol, but every store reduces on the state actor
      // (Store is `@StateActor`), which is where the other store's state may be read.
      StateActor.assumeIsolated {
        guard let store = link.lookup?(id) as? Store<F> else { return nil }
        return Snapshot(value: store.state, version: store.version)
      }
    }
  }

  /// A handle that always reads `value` at `version`: what a test gives the feature.
  public init(fixed value: Value, version: UInt64 = 0) {
    dependency = SharedDependency(storeID: "", featureName: "", link: nil)
    let snapshot = Snapshot(value: value, version: version)
    read = { snapshot }
  }

  /// The other store's state and version now; nil when that store is not open (or the handle
  /// was never bound). A live handle is read on the state actor, where stores reduce; read
  /// anywhere else it traps.
  public var current: Snapshot? { read() }
}

/// A store another feature reads through a ``Shared`` handle, as the server sees it: which store,
/// of which feature, and how to bind the handle to the server's open stores.
public struct SharedDependency: Sendable {
  /// The id of the store read.
  public let storeID: String
  /// The feature that store must hold.
  public let featureName: String
  fileprivate let link: SharedLink?

  /// False for a fixed handle's, which names no store: the descriptor leaves it out.
  var readsAStore: Bool { link != nil }

  fileprivate init(storeID: String, featureName: String, link: SharedLink?) {
    self.storeID = storeID
    self.featureName = featureName
    self.link = link
  }

  /// Makes the handle find its store through `lookup` (the server's open stores by id) at each
  /// read, so a store closed and opened again is read anew. A fixed handle ignores it.
  @StateActor
  public func bind(_ lookup: @escaping @StateActor (String) -> (any AnyStore)?) {
    link?.lookup = lookup
  }
}

/// Where a live handle finds its store; shared by every copy of the feature holding the handle,
/// so binding once reaches them all. Main-actor isolated, hence `Sendable`.
@StateActor
private final class SharedLink: Sendable {
  var lookup: (@StateActor (String) -> (any AnyStore)?)?
  nonisolated init() {}
}

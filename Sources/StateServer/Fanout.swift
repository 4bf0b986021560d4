import JSON
import StateKit

/// What one connection watches, and what each store publication becomes for it: the connection's
/// subscriptions (a store and a path in its published state), the patch of each subscription
/// scoped to its path, and the store's events. Patches that merge while the client does not read
/// are the ``Coalescer``'s.
///
/// One per connection: a client attached beside another (issue 12) gets its own, so what it
/// subscribed to and how far behind it is never touch the others.
@StateActor
final class Fanout {
  let registry: StoreRegistry
  /// `initialize`'s `subscribe`: whether every store is watched at its root automatically.
  var subscribesToAll = true
  /// The subscriptions of each store, by store id.
  var subscriptions: [String: [Subscription]] = [:] {
    didSet {
      lastWatchedStore = nil
      lastWatched = []
    }
  }
  /// The subscriptions of the store that published last (`lastWatchedStore`): a client
  /// dispatching to one store finds them without hashing its id for every publication.
  /// Forgotten whenever `subscriptions` changes (the subscription objects themselves are shared,
  /// so their versions stay current). Two properties, not an optional tuple: reading the tuple
  /// copied the array out (a retain and a release per publication).
  private var lastWatchedStore: String?
  private var lastWatched: [Subscription] = []

  init(registry: StoreRegistry) {
    self.registry = registry
  }

  // MARK: Subscriptions

  /// A store was opened: watch its root when the client watches every store.
  func opened(_ store: any AnyStore) {
    if subscribesToAll {
      subscriptions[store.id] = [Subscription(path: .root, version: store.version)]
    }
  }

  /// `initialize`'s choice: every open store's root, or nothing until `state/subscribe`.
  func subscribeToAll(_ all: Bool) {
    subscribesToAll = all
    guard all else {
      subscriptions = [:]
      return
    }
    for store in registry.openStores
    where subscriptions[store.id]?.contains(where: { $0.path.isRoot }) != true {
      subscriptions[store.id, default: []].append(Subscription(path: .root, version: store.version))
    }
  }

  /// Watches `path` of `store` from its current version (patches queued before carry older
  /// versions; the client's copy starts from the state it was just sent).
  func subscribe(_ store: any AnyStore, at path: JSONPointer) {
    if let existing = subscriptions[store.id]?.first(where: { $0.path == path }) {
      existing.version = store.version
      existing.exists = true
    } else {
      subscriptions[store.id, default: []].append(Subscription(path: path, version: store.version))
    }
  }

  func unsubscribe(_ storeID: String, at path: JSONPointer) {
    subscriptions[storeID]?.removeAll { $0.path == path }
  }

  /// Forgets a closed store; true when the client watched it (and so is told it closed).
  func closed(_ storeID: String) -> Bool {
    subscriptions.removeValue(forKey: storeID)?.isEmpty == false
  }

  // MARK: Publications

  /// The lines a store's publication becomes: a patch for every subscription whose part of the
  /// state changed (`patch`), then the events whatever the subscriptions (`event`). `cause` is
  /// the publication's cause as this client sees it (its own request id, or none). `store` is
  /// asked for only by a subscription to a path below the root, which scopes the patch in the
  /// store's published state: a root subscription (the usual one) never holds a reference to
  /// the store, which cost a retain and a release per publication and client.
  ///
  /// Subscriptions (and `initialize {subscribe: "none"}`) choose which *state* a client
  /// mirrors. Events are one-off and never replayed, and the protocol promises a dispatch's
  /// events before its response: a client that subscribed to nothing still gets every
  /// `store/event`.
  ///
  /// Each line is handed over (`consuming`): it moves into the connection's queue instead of
  /// being copied there and destroyed here. A publication that leaves values to the state goes
  /// to ``linesHolding(for:_:of:cause:patch:event:)`` instead.
  func lines(
    for publication: Publication, of store: () -> any AnyStore, cause: JSON?,
    patch: (consuming PatchNotice) -> Void, event: (consuming Outgoing) -> Void
  ) {
    if publication.to != publication.from {
      if lastWatchedStore != publication.store {
        lastWatchedStore = publication.store
        lastWatched = subscriptions[publication.store] ?? []
      }
      if lastWatched.count == 1 && lastWatched[0].isRoot {
        // The usual case, one subscription to the whole state: its fields are read and its
        // version moved on with no call in between, and before the line is handed over, so the
        // subscription is not retained around any call.
        guard !publication.patch.isEmpty else { return publishEvents(of: publication, event) }
        let from = lastWatched[0].version
        lastWatched[0].version = publication.to
        patch(
          PatchNotice(
            store: publication.store, path: lastWatched[0].pathText, from: from,
            to: publication.to, operations: publication.patch, cause: cause))
      } else {
        let watching = lastWatched
        for subscription in watching {
          if let (notice, _) = notice(
            for: publication, holding: [], by: subscription, of: store, cause: cause)
          {
            patch(notice)
          }
        }
      }
    }
    publishEvents(of: publication, event)
  }

  /// `lines` for a publication that leaves `held` to the state (`HeldValue`): each patch comes
  /// with those its operations stand for (nil: none), for the connection to write it while it
  /// is sent rather than queue it. Apart from `lines`, which every publication takes, so that
  /// its path stays that of a publication without them.
  func linesHolding(
    for publication: Publication, _ held: [HeldValue], of store: () -> any AnyStore,
    cause: JSON?, patch: (consuming PatchNotice, [HeldValue]?) -> Void,
    event: (consuming Outgoing) -> Void
  ) {
    for subscription in subscriptions[publication.store] ?? [] {
      if let (notice, held) = notice(
        for: publication, holding: held, by: subscription, of: store, cause: cause)
      {
        patch(notice, held)
      }
    }
    publishEvents(of: publication, event)
  }

  /// A publication's events, each a line whatever the subscriptions.
  private func publishEvents(of publication: Publication, _ event: (consuming Outgoing) -> Void) {
    guard !publication.events.isEmpty else { return }
    for item in publication.events {
      let params: JSON = ["store": .string(publication.store), "event": item]
      event(
        .message(Connection.notification("store/event", params), barriers: [publication.store]))
    }
  }

  /// The patch one subscription receives of a publication that changed the state (nil when its
  /// part did not change), with the values of `holding` it leaves to the state; the
  /// subscription's version moves on to the publication's.
  private func notice(
    for publication: Publication, holding: [HeldValue], by subscription: Subscription,
    of store: () -> any AnyStore, cause: JSON?
  ) -> (PatchNotice, [HeldValue]?)? {
    let operations: [JSON]
    var held: [HeldValue]?
    if subscription.isRoot {
      operations = publication.patch
      held = holding.isEmpty ? nil : holding
    } else {
      // The subscribed value alone, asked of the store only when the subtree changed whole: a
      // view may keep a large array's elements in its typed state only (ArrayElision). A value
      // the patch left to the state (`HeldValue`) is encoded only when the subscribed part lies
      // inside it; otherwise the scope drops its operation or asks the store for the part.
      let store = store()
      if let whole = holding.first(where: { $0.path == subscription.path }) {
        // The subscribed part itself was replaced whole: its one operation is the held value's,
        // sent as the root's is, written from the state.
        operations = Self.scope(
          publication.patch(holdingNullFor: holding), to: subscription.path,
          existedBefore: subscription.exists, value: { .null }
        ).map(HeldValue.holding)
        held = operations.count == 1 ? [whole.placed(at: 0)] : nil
      } else {
        let patch =
          holding.isEmpty
          ? publication.patch
          : Publication.reads(holding, scopedTo: subscription.path)
            ? (try? publication.filled(with: holding)) ?? []
            : publication.patch(holdingNullFor: holding)
        operations = Self.scope(
          patch, to: subscription.path, existedBefore: subscription.exists,
          value: { store.publishedValue(at: subscription.path) })
      }
      subscription.exists = store.hasPublishedValue(at: subscription.path)
    }
    guard !operations.isEmpty else { return nil }
    let from = subscription.version
    subscription.version = publication.to
    let notice = PatchNotice(
      store: publication.store, path: subscription.pathText, from: from, to: publication.to,
      operations: operations, cause: cause)
    return (notice, held)
  }

  /// The operations of `patch` that a subscription to `path` receives (JSONPatch.scoped): ops
  /// outside the subtree left out, an op on an ancestor sent as one op on `path`.
  /// `existedBefore` (whether the client's copy has a value at `path`) picks `add`, `replace`
  /// or `remove` for a change of the subtree as a whole.
  static func scope(
    _ patch: [JSON], to path: JSONPointer, existedBefore: Bool, value: () -> JSON?
  ) -> [JSON] {
    // `existedBefore` is known, so the parent's kind is never asked.
    guard let parsed = try? JSONPatch(json: .array(patch)),
      let scoped = parsed.scoped(
        to: path, existedBefore: existedBefore, value: value, parentIsObject: { false })
    else { return [] }
    return scoped.operations.map(\.json)
  }
}

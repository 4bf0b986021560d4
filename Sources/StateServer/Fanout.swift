import JSON
import StateKit

/// What one connection watches, and what each store publication becomes for it: the connection's
/// subscriptions (a store and a path in its published state), the patch of each subscription
/// scoped to its path, the store's events, and the compaction of patches that merged while the
/// client did not read.
///
/// One per connection: a client attached beside another (issue 12) gets its own, so what it
/// subscribed to and how far behind it is never touch the others.
@MainActor
final class Fanout {
  let registry: StoreRegistry
  /// `initialize`'s `subscribe`: whether every store is watched at its root automatically.
  var subscribesToAll = true
  /// The subscriptions of each store, by store id.
  var subscriptions: [String: [Subscription]] = [:] {
    didSet { lastWatched = nil }
  }
  /// The subscriptions of the store that published last: a client dispatching to one store
  /// finds them without hashing its id for every publication. Forgotten whenever
  /// `subscriptions` changes (the subscription objects themselves are shared, so their
  /// versions stay current).
  private var lastWatched: (store: String, subscriptions: [Subscription])?

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
  /// the publication's cause as this client sees it (its own request id, or none).
  ///
  /// Subscriptions (and `initialize {subscribe: "none"}`) choose which *state* a client
  /// mirrors. Events are one-off and never replayed, and the protocol promises a dispatch's
  /// events before its response: a client that subscribed to nothing still gets every
  /// `store/event`.
  func lines(
    for publication: Publication, of store: any AnyStore, cause: JSON?,
    patch: (PatchNotice) -> Void, event: (Outgoing) -> Void
  ) {
    let watching: [Subscription]
    if let lastWatched, lastWatched.store == publication.store {
      watching = lastWatched.subscriptions
    } else {
      watching = subscriptions[publication.store] ?? []
      lastWatched = (publication.store, watching)
    }
    guard !watching.isEmpty || !publication.events.isEmpty else { return }
    if publication.to != publication.from {
      for subscription in watching {
        let operations: [JSON]
        if subscription.path.isRoot {
          operations = publication.patch
        } else {
          operations = Self.scope(
            publication.patch, to: subscription.path, in: store.published,
            existedBefore: subscription.exists)
          subscription.exists = subscription.path.value(in: store.published) != nil
        }
        guard !operations.isEmpty else { continue }
        patch(
          PatchNotice(
            store: publication.store, path: subscription.pathText, from: subscription.version,
            to: publication.to, operations: operations, cause: cause))
        subscription.version = publication.to
      }
    }
    for item in publication.events {
      let params: JSON = ["store": .string(publication.store), "event": item]
      event(
        .message(Connection.notification("store/event", params), barriers: [publication.store]))
    }
  }

  /// The operations of `patch` that a subscription to `path` receives (JSONPatch.scoped): ops
  /// outside the subtree left out, an op on an ancestor sent as one op on `path`.
  /// `existedBefore` (whether the client's copy has a value at `path`) picks `add`, `replace`
  /// or `remove` for a change of the subtree as a whole.
  static func scope(_ patch: [JSON], to path: JSONPointer, in newState: JSON, existedBefore: Bool)
    -> [JSON]
  {
    guard let parsed = try? JSONPatch(json: .array(patch)),
      let scoped = parsed.scoped(to: path, in: newState, existedBefore: existedBefore)
    else { return [] }
    return scoped.operations.map(\.json)
  }

  // MARK: Coalescing

  /// Replaces a merged patch's operations by the subscribed value itself once they outweigh it,
  /// so a stalled client costs at most about one copy of each state it watches.
  ///
  /// The queue calls it only for a patch that is still the newest of its subscription: the
  /// subtree has not changed since the patch's `to` (a root patch's `to` is the store's version;
  /// a path's subtree may have stayed equal while other parts moved on).
  func compact(_ notice: inout PatchNotice) {
    guard let weight = notice.weight, weight >= 2 * max(notice.checkedWeight, 8),
      let store = registry.store(notice.store),
      let path = try? JSONPointer(parsing: notice.path),
      let value = path.value(in: store.published),
      !path.isRoot || store.version == notice.to
    else { return }
    notice.checkedWeight = weight
    let size = nodeCount(value, limit: weight)
    guard size < weight else { return }
    // The subscribed value itself, as the one operation a subscriber to `path` would get for
    // a change of the whole subtree (`add` under an object, `replace` of an array element).
    let whole = JSONPatch([.replace(path: path, value: value)]).scoped(
      to: path, in: store.published)
    notice.operations =
      whole?.operations.map(\.json) ?? [["op": "replace", "path": "", "value": value]]
    notice.weight = size
    notice.checkedWeight = size
  }
}

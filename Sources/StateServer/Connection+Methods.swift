import JSON
import StateKit

/// The methods other than `dispatch`: state, subscriptions, stores, discovery, cancellation and
/// shutdown. Each validates all of its params before changing anything.
extension Connection {
  static let protocolVersion: Int64 = 1

  func initialize(_ params: Params) throws(RPCError) -> Outcome {
    let subscribe = try params.optionalChoice("subscribe", ["all", "none"]) ?? "all"
    if let client = params.object["client"], client.objectValue == nil {
      throw .invalidParams(
        pointer: "/client",
        reason: "expected an object {name, version}, got \(client.kindDescription)")
    }
    subscribesToAll = subscribe == "all"
    if subscribesToAll {
      for store in registry.openStores
      where subscriptions[store.id]?.contains(where: { $0.path.isRoot }) != true {
        subscriptions[store.id, default: []].append(
          Subscription(path: .root, version: store.version))
      }
    } else {
      subscriptions = [:]
    }
    let features: [JSON] = registry.features.map { feature in
      [
        "name": .string(feature.name), "actions": .array(feature.publicActions.map(JSON.string)),
        "events": .array(feature.eventNames.map(JSON.string)),
      ]
    }
    // Every store's subscriptions were remade: a patch made from now on must not merge into one
    // queued before, whose versions the new subscription does not continue.
    return .result(
      [
        "protocolVersion": .integer(Self.protocolVersion),
        "server": ["name": "stateserver", "version": .string(Server.version)],
        "features": .array(features),
        "stores": .array(registry.openStores.map(Self.summary)),
        "attachedClients": attachedClients,
        "capabilities": [
          "waits": ["reduced", "settled"], "subscriptionPaths": true, "batches": true,
          "cancelRequest": true, "coalescing": true,
          "history": .integer(Int64(options.historyLimit)),
          "rewind": .bool(options.historyLimit > 0),
          "recording": .bool(options.recordPath != nil),
          "maxMessageBytes": .integer(Int64(options.maxMessageBytes)),
        ],
      ], barriers: registry.openStores.map(\.id))
  }

  func getState(_ params: Params) throws(RPCError) -> Outcome {
    let (store, path, state) = try lookUp(params)
    _ = path
    return .result(
      ["store": .string(store.id), "version": .integer(Int64(store.version)), "state": state],
      barriers: [store.id])
  }

  func subscribe(_ params: Params) throws(RPCError) -> Outcome {
    let (store, path, state) = try lookUp(params)
    // Patches queued before this response carry older versions; the client's copy starts from
    // the state in this response, so the subscription's next patch starts from this version.
    if let existing = subscriptions[store.id]?.first(where: { $0.path == path }) {
      existing.version = store.version
      existing.exists = true
    } else {
      subscriptions[store.id, default: []].append(Subscription(path: path, version: store.version))
    }
    return .result(
      ["store": .string(store.id), "version": .integer(Int64(store.version)), "state": state],
      barriers: [store.id])
  }

  func unsubscribe(_ params: Params) throws(RPCError) -> Outcome {
    let storeID = try params.string("store", "the id of an open store")
    let path = try params.pointer("path")
    guard registry.store(storeID) != nil else { throw .unknownStore(storeID) }
    subscriptions[storeID]?.removeAll { $0.path == path }
    return .result([:])
  }

  /// The store and the value at `path` in its published state.
  private func lookUp(_ params: Params) throws(RPCError) -> (any AnyStore, JSONPointer, JSON) {
    let storeID = try params.string("store", "the id of an open store")
    let path = try params.pointer("path")
    guard let store = registry.store(storeID) else { throw .unknownStore(storeID) }
    guard let state = path.value(in: store.published) else {
      throw .invalidParams(
        pointer: "/path",
        reason:
          "the state of '\(storeID)' has no value at '\(path.description)' (version \(store.version))"
      )
    }
    return (store, path, state)
  }

  func openStore(_ params: Params) throws(RPCError) -> Outcome {
    let featureName = try params.string("feature", "the name of a registered feature")
    let storeID = try params.optionalString("store", "an id for the new store")
    let initial = try params.optionalObject(
      "state", "a merge patch over the feature's initial state")
    let persist = try params.optionalBool("persist") ?? false
    guard let feature = registry.feature(named: featureName) else {
      throw .unknownFeature(featureName)
    }
    let store = try registry.open(feature: feature, id: storeID, initial: initial, persist: persist)
    attach(store)
    return .result(
      [
        "store": .string(store.id), "feature": .string(feature.name),
        "version": .integer(Int64(store.version)), "state": store.published,
      ], barriers: [store.id])
  }

  func closeStore(_ params: Params) throws(RPCError) -> Outcome {
    let storeID = try params.string("store", "the id of an open store")
    guard registry.store(storeID) != nil else { throw .unknownStore(storeID) }
    registry.close(storeID)
    (hub?.connections.first ?? self).recorder?.closed(storeID)
    hub?.storeClosed(storeID, by: self)
    if subscriptions.removeValue(forKey: storeID)?.isEmpty == false {
      let params: JSON = ["store": .string(storeID), "reason": "closed"]
      emit(.message(Self.notification("store/closed", params), barriers: [storeID]))
    }
    return .result([:])
  }

  func cancel(_ params: Params) throws(RPCError) -> Outcome {
    guard let id = params.object["id"] else {
      throw .invalidParams(pointer: "/id", reason: "missing; expected the id of a pending request")
    }
    for reply in pendingReplies(for: id) { reply.fail(.cancelled) }
    return .result([:])
  }

  func shutdown(id: JSON?) -> Outcome {
    beginShutdown(reason: "shutdown request")
    guard let id else { return .result([:]) }
    let reply = PendingReply(id: id)
    shutdownReplies.append(reply)
    return .later(reply)
  }

  /// A feature as `features/list` shows it.
  static func describe(_ feature: FeatureDescriptor) -> JSON {
    [
      "name": .string(feature.name),
      "actions": .array(feature.publicActions.map(JSON.string)),
      "events": .array(feature.eventNames.map(JSON.string)),
      "persistent": .bool(feature.isPersistent),
      "schema": [
        "state": feature.viewSchema,
        "actions": .object(
          JSONObject(feature.actionSchemas.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })),
        "events": .object(
          JSONObject(feature.eventSchemas.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })),
      ],
    ]
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
}

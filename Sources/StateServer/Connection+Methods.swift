import JSON
import StateKit

/// The methods other than `dispatch`: state, subscriptions, stores, discovery, cancellation and
/// shutdown. Each validates all of its params before changing anything.
extension Connection {
  nonisolated static let protocolVersion: Int64 = 1

  /// Also accepted again later: a repeated `initialize` re-chooses the subscriptions (`subscribe`)
  /// and answers as the first did, which is how a client switches between watching every store
  /// and choosing its own.
  func initialize(_ params: InitializeParams) throws(RPCError) -> Outcome {
    if case .string(let text)? = params.protocolVersion {
      throw .invalidParams(
        pointer: "/protocolVersion",
        reason: "expected the protocol version as an integer (\(Self.protocolVersion)), got the "
          + "string \"\(text)\"")
    }
    if let version = params.protocolVersion, version != .null,
      version != .integer(Self.protocolVersion)
    {
      throw RPCError(
        code: RPCError.invalidParamsCode, message: "Invalid params",
        data: [
          "pointer": "/protocolVersion",
          "reason": .string(
            "protocol version \(version.description) is not supported; this server speaks "
              + "version \(Self.protocolVersion)"),
          "supported": [.integer(Self.protocolVersion)],
        ])
    }
    if let client = params.client, client.objectValue == nil {
      throw .invalidParams(
        pointer: "/client",
        reason: "expected an object {name, version}, got \(client.kindDescription)")
    }
    let speaks = try agree(on: params.capabilities, clock: params.clock)
    try chooseClock(params.clock)
    adopt(speaks)
    fanout.subscribeToAll((params.subscribe ?? .all) == .all)
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
        "server": ["name": .string(options.name), "version": .string(options.version)],
        "features": .array(features),
        "stores": .array(registry.summaries),
        "attachedClients": attachedClients,
        "capabilities": [
          "waits": Wait.names, "subscriptionPaths": true,
          "cancelRequest": true, "coalescing": true,
          "history": .integer(Int64(options.historyLimit)),
          "rewind": .bool(options.historyLimit > 0),
          "recording": .bool(options.recordPath != nil),
          "maxMessageBytes": .integer(Int64(options.maxMessageBytes)),
          "clock": .string(options.clock.mode.rawValue),
          "progress": .bool(speaks.progress), "batches": .bool(speaks.batch),
        ],
      ], barriers: registry.openStores.map(\.id))
  }

  func getState(_ params: StateParams) throws(RPCError) -> Outcome {
    let path = params.path.orRoot
    if path.isRoot, let store = registry.store(params.store) {
      return stateResult(
        ["store": .string(store.id), "version": .integer(Int64(store.version))], of: store)
    }
    let (store, _, state) = try lookUp(params)
    return .result(
      ["store": .string(store.id), "version": .integer(Int64(store.version)), "state": state],
      barriers: [store.id])
  }

  func subscribe(_ params: StateParams) throws(RPCError) -> Outcome {
    let path = params.path.orRoot
    if path.isRoot, let store = registry.store(params.store) {
      fanout.subscribe(store, at: path)
      return stateResult(
        ["store": .string(store.id), "version": .integer(Int64(store.version))], of: store)
    }
    let (store, _, state) = try lookUp(params)
    fanout.subscribe(store, at: path)
    return .result(
      ["store": .string(store.id), "version": .integer(Int64(store.version)), "state": state],
      barriers: [store.id])
  }

  func unsubscribe(_ params: StateParams) throws(RPCError) -> Outcome {
    let storeID = params.store
    let path = params.path.orRoot
    guard registry.store(storeID) != nil else { throw .unknownStore(storeID) }
    fanout.unsubscribe(storeID, at: path)
    return .result([:])
  }

  /// The store and the value at `path` in its published state.
  private func lookUp(_ params: StateParams) throws(RPCError) -> (any AnyStore, JSONPointer, JSON) {
    let storeID = params.store
    let path = params.path.orRoot
    guard let store = registry.store(storeID) else { throw .unknownStore(storeID) }
    guard let state = store.publishedValue(at: path) else {
      throw .invalidParams(
        pointer: "/path",
        reason:
          "the state of '\(storeID)' has no value at '\(path.description)' (version \(store.version))"
      )
    }
    return (store, path, state)
  }

  func openStore(_ params: consuming OpenParams) throws(RPCError) -> Outcome {
    let featureName = params.feature
    let storeID = params.store
    let persist = params.persist ?? false
    // Moved out, the params let go: the initial state then has one holder, the store's decode,
    // which frees it once decoded (docs/architecture.md, "The open at scale").
    let initial = (consume params).state
    if let initial, initial.objectValue == nil {
      throw .invalidParams(
        pointer: "/state",
        reason: "expected an object (a merge patch over the feature's initial state), got "
          + initial.kindDescription)
    }
    guard let feature = registry.feature(named: featureName) else {
      throw .unknownFeature(featureName)
    }
    let store = try registry.open(
      feature: feature, id: storeID, initial: consume initial, persist: persist)
    attach(store)
    // The client's parsed state was freed once decoded, and glibc keeps such memory resident
    // until trimmed (IdleTrim): a store large enough to keep its elements in its state alone
    // gives it back now rather than after the next quiet second.
    if store.publishedElementsLeftOut > 0 { IdleTrim.trimFreeMemory() }
    return stateResult(
      [
        "store": .string(store.id), "feature": .string(feature.name),
        "version": .integer(Int64(store.version)),
      ], of: store)
  }

  func closeStore(_ params: CloseParams) throws(RPCError) -> Outcome {
    let storeID = params.store
    guard registry.store(storeID) != nil else { throw .unknownStore(storeID) }
    let failure: CommitFailure?
    do {
      try registry.close(storeID)
      failure = nil
    } catch {
      failure = error
    }
    hub?.storeClosed(storeID, by: self)
    recorder?.closed(storeID)
    if fanout.closed(storeID) {
      let params: JSON = ["store": .string(storeID), "reason": "closed"]
      emit(.message(Self.notification("store/closed", params), barriers: [storeID]))
    }
    if let failure {
      throw .internalError(
        "store '\(storeID)' closed, but its last changes are not saved: \(failure.reason)")
    }
    return .result([:])
  }

  func cancel(_ params: CancelParams) -> Outcome {
    for reply in router.pendingReplies(for: params.id) { reply.fail(.cancelled) }
    cancelWork(of: params.id)
    return .result([:])
  }

  func shutdown(id: JSON?) -> Outcome {
    beginShutdown(reason: "shutdown request")
    guard let id else { return .result([:]) }
    let reply = PendingReply(id: id)
    lifecycle.answerAtEnd(reply)
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
}

import JSON
import StateKit

/// `history/skip`, `store/fork`, `state/diff` and `state/blame`: time travel that branches.
extension Connection {
  /// `history/skip`: the action that made `version` is turned off or on again and the state is
  /// recomputed from the actions that remain, as a new version (its patch goes to every
  /// subscriber like any other). Effects are not run again.
  func skipEntry(_ params: SkipParams, id: JSON?) throws(RPCError) -> Outcome {
    let storeID = params.store
    guard let store = registry.store(storeID) else { throw .unknownStore(storeID) }
    guard let branching = store as? any BranchingStore, store.firstHeldVersion != nil else {
      throw .historyOff(storeID)
    }
    do {
      // Tagged like a dispatch's cause: request ids are each client's own (Connection+Attached).
      let now = try branching.skip(
        entryAt: params.version, skipped: params.skipped, cause: storeCause(id))
      return .dispatched(store: storeID, version: now)
    } catch {
      throw .skipRefused(error, store: storeID, asked: params.version)
    }
  }

  /// `store/fork`: a new store of the same feature whose private state is the original's at
  /// `version`, at that version; not persisted unless `persist` is true.
  func forkStore(_ params: ForkParams) throws(RPCError) -> Outcome {
    let storeID = params.store
    guard let store = registry.store(storeID) else { throw .unknownStore(storeID) }
    guard let feature = registry.feature(named: store.featureName) else {
      throw .unknownFeature(store.featureName)
    }
    let version = params.version ?? store.version
    let state: JSON
    if version == store.version {
      state = store.snapshot
    } else {
      guard let branching = store as? any BranchingStore else { throw .historyOff(storeID) }
      do {
        state = try branching.privateState(at: version)
      } catch {
        throw .versionUnavailable(error, store: storeID, asked: version)
      }
    }
    let persist = params.persist ?? false
    if persist, let fork = params.as, registry.persistence?.savedFeature(of: fork) != nil {
      throw .invalidParams(
        pointer: "/as",
        reason: "store '\(fork)' has saved data; fork into another id, or open it with store/open")
    }
    let fork = try registry.open(
      feature: feature, id: params.as, initial: nil, persist: persist,
      restoring: (state: state, version: version))
    attach(fork)
    return stateResult(
      [
        "store": .string(fork.id), "feature": .string(feature.name), "from": .string(storeID),
        "version": .integer(Int64(fork.version)),
      ], of: fork)
  }

  /// `state/diff`: the RFC 6902 patch that turns `store`'s published state into `other`'s.
  func diffStates(_ params: DiffParams) throws(RPCError) -> Outcome {
    guard let store = registry.store(params.store) else { throw .unknownStore(params.store) }
    guard let other = registry.store(params.other) else { throw .unknownStore(params.other) }
    let patch = JSONPatch.diff(from: store.published, to: other.published)
    return .result(
      [
        "store": .string(store.id), "version": .integer(Int64(store.version)),
        "other": .string(other.id), "otherVersion": .integer(Int64(other.version)),
        "patch": .array(patch.operations.map(\.json)),
      ], barriers: [store.id, other.id])
  }

  /// `state/blame`: the held entry that last changed the value at `path`, with its origin
  /// chain, and the earlier entries that touched it (the rule: HistoryBlame.swift).
  func blameValue(_ params: BlameParams) throws(RPCError) -> Outcome {
    let storeID = params.store
    guard let store = registry.store(storeID) else { throw .unknownStore(storeID) }
    guard let first = store.firstHeldVersion else { throw .historyOff(storeID) }
    let path = params.path.pointer
    guard store.hasPublishedValue(at: path) else {
      throw .invalidParams(
        pointer: "/path",
        reason:
          "the state of '\(storeID)' has no value at '\(path.description)' (version \(store.version))"
      )
    }
    let entries = store.historyEntries(since: nil, limit: Int.max)
    let bySeq = Dictionary(entries.map { ($0.seq, $0) }) { first, _ in first }
    let touches = HistoryBlame.touches(of: path, in: entries)
    let limit = Int(min(params.limit ?? 100, 1000))
    func touch(_ touch: HistoryBlame.Touch) -> JSON {
      var object = HistoryWire.entry(touch.entry, withEffects: false)
      object["path"] = .string(touch.path.description)
      object["created"] = .bool(touch.created)
      object["chain"] = .array(Self.originChain(of: touch.entry, in: bySeq))
      return .object(object)
    }
    return .result(
      [
        "store": .string(storeID), "path": .string(path.description),
        "version": .integer(Int64(store.version)), "first": .integer(Int64(first)),
        "last": touches.first.map(touch) ?? .null,
        "before": .array(touches.dropFirst().prefix(limit).map(touch)),
        // Nothing older than the oldest entry held is known: the value may be older still.
        "complete": .bool(touches.last?.created == true),
      ], barriers: [storeID])
  }

  /// Who set an entry off, nearest first: for an action an effect sent, the action whose
  /// effect it was and that action's effects, then that action's own origin, up to the
  /// client's request (or the server); an origin no longer held ends the chain.
  static func originChain(of entry: HistoryEntry, in bySeq: [UInt64: HistoryEntry]) -> [JSON] {
    var chain: [JSON] = []
    var origin = entry.origin
    var seen: Set<UInt64> = [entry.seq]
    while let seq = origin.action {
      guard let parent = bySeq[seq], seen.insert(seq).inserted else {
        chain.append(["seq": .integer(Int64(seq)), "held": false])
        return chain
      }
      chain.append([
        "seq": .integer(Int64(seq)), "version": .integer(Int64(parent.version)),
        "action": parent.action() ?? .null,
        "effects": .array(
          parent.effects.map { ["effect": .integer(Int64($0.effect)), "kind": .string($0.kind)] }),
      ])
      origin = parent.origin
    }
    chain.append(HistoryWire.origin(origin))
    return chain
  }
}

extension RPCError {
  /// Why `history/skip` cannot toggle: `-32005` with `data.oldest` when history can no longer
  /// recompute the action, else invalid params saying which versions can be toggled.
  static func skipRefused(_ error: SkipError, store: String, asked: UInt64) -> RPCError {
    switch error {
    case .off:
      return historyOff(store)
    case .future(let current):
      return versionUnavailable(.future(current: current), store: store, asked: asked)
    case .notAnAction(let version):
      return RPCError(
        code: invalidParamsCode, message: "Invalid params",
        data: [
          "pointer": "/version",
          "reason": .string(
            "no action held made version \(version) of '\(store)' (a rewind or skip did, or it "
              + "changed nothing); history/get lists the entries and their versions"),
        ])
    case .notRecomputable(let oldest, let rewound):
      let since =
        oldest.map { "the oldest version whose action can be toggled is \($0)" }
        ?? "no action held can be toggled"
      let why =
        rewound.map { "the store was rewound at version \($0) after it, which set the state" }
        ?? "its history was trimmed before it"
      var data: JSONObject = [
        "pointer": "/version", "oldest": oldest.map { .integer(Int64($0)) } ?? .null,
        "reason": .string(
          "version \(asked) of '\(store)' can no longer be recomputed: \(why); \(since)"),
      ]
      if let rewound { data["rewound"] = .integer(Int64(rewound)) }
      return RPCError(code: notRecomputableCode, message: "Not recomputable", data: .object(data))
    }
  }
}

extension OpenRPC.ErrorEntry {
  static let notRecomputable = OpenRPC.ErrorEntry(RPCError.notRecomputableCode, "Not recomputable")
}

extension OpenRPC {
  /// What `state/blame` answers.
  static let blameResult: JSON = [
    "type": "object", "required": ["store", "path", "version", "first", "last", "before"],
    "properties": [
      "store": ["type": "string"], "path": ["type": "string"],
      "version": ["type": "integer", "minimum": 0], "first": ["type": "integer", "minimum": 0],
      "last": ["type": ["object", "null"]], "before": ["type": "array"],
      "complete": ["type": "boolean"],
    ],
  ]
  /// What `state/diff` answers.
  static let diffResult: JSON = [
    "type": "object", "required": ["store", "version", "other", "otherVersion", "patch"],
    "properties": [
      "store": ["type": "string"], "version": ["type": "integer", "minimum": 0],
      "other": ["type": "string"], "otherVersion": ["type": "integer", "minimum": 0],
      "patch": ["type": "array"],
    ],
  ]
}

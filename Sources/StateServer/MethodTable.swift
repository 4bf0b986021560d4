import JSON

extension Connection {
  /// Every method of the protocol, declared once, in the order `rpc.discover` lists them.
  ///
  /// To add a method: a params type (`Decodable`, in its own file or `MethodParams.swift`), an
  /// `extension Connection` function that serves it (in its own file, `Connection+History.swift`),
  /// and one entry here. Nothing else names it: routing, the draining rule and `rpc.discover`
  /// read this list.
  nonisolated static let methods: [RPCMethod] = [
    RPCMethod(
      "initialize", InitializeParams.self,
      summary: "Optional handshake; without it the defaults apply. Repeating it re-chooses the "
        + "subscriptions.",
      params: [
        .init("protocolVersion", ["type": "integer", "const": .integer(protocolVersion)]),
        .init(
          "client",
          ["type": "object", "properties": ["name": OpenRPC.string, "version": OpenRPC.string]]),
        .init("subscribe", ["enum": InitializeParams.Subscribe.names]),
        .init("clock", ["enum": ClockChoice.names]),
        .init("capabilities", OpenRPC.clientCapabilities),
      ], errors: [.invalidParams]
    ) { connection, params, _ throws(RPCError) in try connection.initialize(params) },
    RPCMethod(
      "dispatch", DispatchParams.self,
      summary: "Sends an action to a store; the patch and events come before the response.",
      params: [
        .init("store", OpenRPC.string, required: true),
        .init("action", ["$ref": "#/components/schemas/action"], required: true),
        .init("wait", ["enum": Wait.names]),
        .init("progressToken", ["type": ["string", "integer"]]),
      ], result: OpenRPC.storeVersion, errors: [.unknownStore, .invalidParams, .actionRefused],
      direct: DispatchParams.init(direct:)
    ) { connection, params, id throws(RPCError) in try connection.dispatch(params, id: id) },
    RPCMethod(
      "clock/now", Params.self, summary: "The server's clock: real or virtual, and its time in ms.",
      result: OpenRPC.clockReading
    ) { connection, _, _ throws(RPCError) in connection.clockNow() },
    RPCMethod(
      "clock/advance", AdvanceParams.self,
      summary: "Moves the virtual clock; answers once every effect due by then ran and its "
        + "patches were written.",
      params: [.init("ms", ["type": "integer", "minimum": 0], required: true)],
      result: OpenRPC.clockReading, errors: [.invalidParams]
    ) { connection, params, id throws(RPCError) in try connection.advanceClock(params, id: id) },
    RPCMethod(
      "state/get", StateAtParams.self,
      summary:
        "The published state of a store, or the value at path; with version, as it was then.",
      params: OpenRPC.Param.storeAndPath + [
        .init("version", ["type": "integer", "minimum": 0])
      ], result: OpenRPC.stateResult,
      errors: [.unknownStore, .invalidParams]
    ) { connection, params, _ throws(RPCError) in try connection.getStateAt(params) },
    RPCMethod(
      "history/get", Params.self,
      summary: "A store's recent entries (actions, rewinds, effect events) above version since.",
      params: [
        .init("store", OpenRPC.string, required: true),
        .init("since", ["type": "integer", "minimum": 0]),
        .init("limit", ["type": "integer", "minimum": 0]),
      ], result: OpenRPC.historyResult, errors: [.unknownStore, .invalidParams]
    ) { connection, params, _ throws(RPCError) in try connection.getHistory(params) },
    RPCMethod(
      "store/rewind", Params.self,
      summary: "Makes the state at a past version current as a new version; effects are cancelled.",
      params: [
        .init("store", OpenRPC.string, required: true),
        .init("version", ["type": "integer", "minimum": 0], required: true),
      ], result: OpenRPC.storeVersion, errors: [.unknownStore, .invalidParams]
    ) { connection, params, id throws(RPCError) in try connection.rewindStore(params, id: id) },
    RPCMethod(
      "history/skip", SkipParams.self,
      summary: "Turns the action that made a version off (or on again) and recomputes the state "
        + "from the actions that remain, as a new version; effects are not run again.",
      params: [
        .init("store", OpenRPC.string, required: true),
        .init("version", ["type": "integer", "minimum": 0], required: true),
        .init("skipped", ["type": "boolean"], required: true),
      ], result: OpenRPC.storeVersion,
      errors: [.unknownStore, .invalidParams, .notRecomputable]
    ) { connection, params, id throws(RPCError) in try connection.skipEntry(params, id: id) },
    RPCMethod(
      "store/fork", ForkParams.self,
      summary: "Opens a new store of the same feature whose state is the original's at a version.",
      params: [
        .init("store", OpenRPC.string, required: true),
        .init("version", ["type": "integer", "minimum": 0]), .init("as", OpenRPC.string),
        .init("persist", ["type": "boolean"]),
      ], result: OpenRPC.stateResult,
      errors: [.unknownStore, .storeExists, .invalidParams]
    ) { connection, params, _ throws(RPCError) in try connection.forkStore(params) },
    RPCMethod(
      "state/diff", DiffParams.self,
      summary: "The RFC 6902 patch turning one store's published state into another's.",
      params: [
        .init("store", OpenRPC.string, required: true),
        .init("other", OpenRPC.string, required: true),
      ], result: OpenRPC.diffResult, errors: [.unknownStore, .invalidParams]
    ) { connection, params, _ throws(RPCError) in try connection.diffStates(params) },
    RPCMethod(
      "state/blame", BlameParams.self,
      summary: "The history entry that last changed the value at path, and those before it.",
      params: [
        .init("store", OpenRPC.string, required: true),
        .init("path", OpenRPC.string, required: true),
        .init("limit", ["type": "integer", "minimum": 0]),
      ], result: OpenRPC.blameResult, errors: [.unknownStore, .invalidParams]
    ) { connection, params, _ throws(RPCError) in try connection.blameValue(params) },
    RPCMethod(
      "state/subscribe", StateParams.self,
      summary: "The state now, then state/patch notifications for it.",
      params: OpenRPC.Param.storeAndPath, result: OpenRPC.stateResult,
      errors: [.unknownStore, .invalidParams]
    ) { connection, params, _ throws(RPCError) in try connection.subscribe(params) },
    RPCMethod(
      "state/unsubscribe", StateParams.self, summary: "Stops the patches of a subscription.",
      params: OpenRPC.Param.storeAndPath, result: OpenRPC.empty, errors: [.unknownStore]
    ) { connection, params, _ throws(RPCError) in try connection.unsubscribe(params) },
    RPCMethod(
      "store/open", OpenParams.self, summary: "Opens another store of a feature.",
      params: [
        .init("feature", OpenRPC.string, required: true), .init("store", OpenRPC.string),
        .init("state", ["type": "object"]), .init("persist", ["type": "boolean"]),
      ], result: OpenRPC.stateResult,
      errors: [.unknownFeature, .storeExists, .invalidParams]
    ) { connection, params, _ throws(RPCError) in try connection.openStore(params) },
    RPCMethod(
      "store/close", CloseParams.self, summary: "Closes a store; its effects are cancelled.",
      params: [.init("store", OpenRPC.string, required: true)], result: OpenRPC.empty,
      errors: [.unknownStore]
    ) { connection, params, _ throws(RPCError) in try connection.closeStore(params) },
    RPCMethod("store/list", NoParams.self, summary: "The open stores.") { connection, _, _ in
      .result([
        "stores": .array(connection.registry.summaries),
        "attachedClients": connection.attachedClients,
      ])
    },
    RPCMethod("features/list", NoParams.self, summary: "The registered features and their schemas.")
    { connection, _, _ in
      .result(["features": .array(connection.registry.features.map(Connection.describe))])
    },
    RPCMethod("rpc.discover", NoParams.self, summary: "This document.") { connection, _, _ in
      .result(
        OpenRPC.document(
          features: connection.registry.features, name: connection.options.name,
          version: connection.options.version))
    },
    RPCMethod(
      "$/cancelRequest", CancelParams.self, servedWhileDraining: true,
      summary: "Cancels a pending request (a notification), and the work of a dispatch that "
        + "gave a progressToken.",
      params: [.init("id", ["type": ["string", "number", "null"]], required: true)],
      result: OpenRPC.empty
    ) { connection, params, _ throws(RPCError) in connection.cancel(params) },
    RPCMethod(
      "shutdown", NoParams.self, servedWhileDraining: true,
      summary: "Drains effects, writes everything pending, then exits.", result: OpenRPC.empty
    ) { connection, _, id in connection.shutdown(id: id) },
  ]

  /// ``methods`` by name, for routing.
  nonisolated static let methodsByName: [String: RPCMethod] = Dictionary(
    methods.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
}

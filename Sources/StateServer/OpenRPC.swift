import JSON
import StateKit

/// The `rpc.discover` answer: an OpenRPC 1.3 document of the protocol's methods, with every
/// registered feature's actions, events and state as component schemas, so a client generator
/// needs nothing else.
enum OpenRPC {
  static func document(features: [FeatureDescriptor]) -> JSON {
    var schemas = JSONObject()
    var actions: [JSON] = []
    var events: [JSON] = []
    for feature in features {
      schemas["\(feature.name).state"] = feature.viewSchema
      for (name, schema) in feature.actionSchemas.sorted(by: { $0.key < $1.key }) {
        schemas["\(feature.name).action.\(name)"] = schema
        actions.append(["$ref": .string("#/components/schemas/\(feature.name).action.\(name)")])
      }
      for (name, schema) in feature.eventSchemas.sorted(by: { $0.key < $1.key }) {
        schemas["\(feature.name).event.\(name)"] = schema
        events.append(["$ref": .string("#/components/schemas/\(feature.name).event.\(name)")])
      }
    }
    schemas["action"] = actions.isEmpty ? envelope : ["anyOf": .array(actions)]
    schemas["event"] = events.isEmpty ? envelope : ["anyOf": .array(events)]
    let storeError = error(RPCError.unknownStoreCode, "Unknown store")
    let invalid = error(RPCError.invalidParamsCode, "Invalid params")
    return [
      "openrpc": "1.3.2",
      "info": [
        "title": "stateserver",
        "version": .string(Server.version),
        "description": """
        JSON-RPC 2.0 over NDJSON on stdio. The server also sends the notifications state/patch \
        {store, from, to, patch, cause?, path?}, store/event {store, event} and store/closed \
        {store, reason}.
        """,
      ],
      "methods": [
        method(
          "initialize", "Optional handshake; without it the defaults apply.",
          [
            param("protocolVersion", ["type": "integer"]),
            param(
              "client", ["type": "object", "properties": ["name": string, "version": string]]),
            param("subscribe", ["enum": ["all", "none"]]),
          ], result: ["type": "object"]),
        method(
          "dispatch", "Sends an action to a store; the patch and events come before the response.",
          [
            param("store", string, required: true),
            param("action", ["$ref": "#/components/schemas/action"], required: true),
            param("wait", ["enum": ["reduced", "settled"]]),
          ], result: storeVersion,
          errors: [storeError, invalid, error(RPCError.actionRefusedCode, "Action refused")]),
        method(
          "state/get",
          "The published state of a store, or the value at path; with version, as it was then.",
          [
            param("store", string, required: true), param("path", string),
            param("version", ["type": "integer", "minimum": 0]),
          ], result: stateResult, errors: [storeError, invalid]),
        method(
          "history/get",
          "A store's recent entries (actions, rewinds, effect events) above version since.",
          [
            param("store", string, required: true),
            param("since", ["type": "integer", "minimum": 0]),
            param("limit", ["type": "integer", "minimum": 0]),
          ], result: historyResult, errors: [storeError, invalid]),
        method(
          "store/rewind",
          "Makes the state at a past version current as a new version; effects are cancelled.",
          [
            param("store", string, required: true),
            param("version", ["type": "integer", "minimum": 0], required: true),
          ], result: storeVersion, errors: [storeError, invalid]),
        method(
          "state/subscribe", "The state now, then state/patch notifications for it.",
          [param("store", string, required: true), param("path", string)], result: stateResult,
          errors: [storeError, invalid]),
        method(
          "state/unsubscribe", "Stops the patches of a subscription.",
          [param("store", string, required: true), param("path", string)], result: empty,
          errors: [storeError]),
        method(
          "store/open", "Opens another store of a feature.",
          [
            param("feature", string, required: true), param("store", string),
            param("state", ["type": "object"]), param("persist", ["type": "boolean"]),
          ], result: stateResult,
          errors: [
            error(RPCError.unknownFeatureCode, "Unknown feature"),
            error(RPCError.storeExistsCode, "Store already exists"), invalid,
          ]),
        method(
          "store/close", "Closes a store; its effects are cancelled.",
          [param("store", string, required: true)], result: empty, errors: [storeError]),
        method("store/list", "The open stores.", [], result: ["type": "object"]),
        method(
          "features/list", "The registered features and their schemas.", [],
          result: ["type": "object"]),
        method("rpc.discover", "This document.", [], result: ["type": "object"]),
        method(
          "$/cancelRequest", "Cancels a pending request (a notification).",
          [param("id", ["type": ["string", "number", "null"]], required: true)], result: empty),
        method(
          "shutdown", "Drains effects, writes everything pending, then exits.", [], result: empty),
      ],
      "components": ["schemas": .object(schemas)],
    ]
  }

  private static let string: JSON = ["type": "string"]
  private static let empty: JSON = ["type": "object", "maxProperties": 0]
  private static let envelope: JSON = [
    "type": "object", "required": ["type"], "properties": ["type": ["type": "string"]],
  ]
  private static let storeVersion: JSON = [
    "type": "object", "required": ["store", "version"],
    "properties": ["store": ["type": "string"], "version": ["type": "integer", "minimum": 0]],
  ]
  private static let historyResult: JSON = [
    "type": "object", "required": ["store", "first", "version", "entries"],
    "properties": [
      "store": ["type": "string"], "first": ["type": "integer", "minimum": 0],
      "version": ["type": "integer", "minimum": 0], "entries": ["type": "array"],
    ],
  ]
  private static let stateResult: JSON = [
    "type": "object", "required": ["store", "version", "state"],
    "properties": [
      "store": ["type": "string"], "version": ["type": "integer", "minimum": 0], "state": true,
    ],
  ]

  private static func method(
    _ name: String, _ summary: String, _ params: [JSON], result: JSON, errors: [JSON] = []
  ) -> JSON {
    var object: JSONObject = [
      "name": .string(name), "summary": .string(summary), "paramStructure": "by-name",
      "params": .array(params), "result": ["name": "result", "schema": result],
    ]
    if !errors.isEmpty { object["errors"] = .array(errors) }
    return .object(object)
  }

  private static func param(_ name: String, _ schema: JSON, required: Bool = false) -> JSON {
    ["name": .string(name), "schema": schema, "required": .bool(required)]
  }

  private static func error(_ code: Int, _ message: String) -> JSON {
    ["code": .integer(Int64(code)), "message": .string(message)]
  }
}

import JSON
import StateKit

/// The `rpc.discover` answer: an OpenRPC 1.3 document of the protocol's methods, with every
/// registered feature's actions, events and state as component schemas, so a client generator
/// needs nothing else.
enum OpenRPC {
  static func document(
    features: [FeatureDescriptor], name: String = "stateserver", version: String = Server.version
  ) -> JSON {
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
    return [
      "openrpc": "1.3.2",
      "info": [
        "title": .string(name),
        "version": .string(version),
        "description": """
        JSON-RPC 2.0 over NDJSON on stdio. The server also sends the notifications state/patch \
        {store, from, to, patch, cause?, path?}, store/event {store, event}, store/closed \
        {store, reason} and, to a client that said it speaks progress, $/progress {token, \
        value: {kind: begin | report | end, done, total?, message?, cancelled?}} (schema in \
        x-notifications).
        """,
      ],
      "methods": .array(Connection.methods.map(\.openRPC)),
      "components": ["schemas": .object(schemas)],
      "x-notifications": ["$/progress": progressParams],
    ]
  }

  static let anyObject: JSON = ["type": "object"]
  /// The schema of most params.
  static let string: JSON = ["type": "string"]
  static let empty: JSON = ["type": "object", "maxProperties": 0]
  private static let envelope: JSON = [
    "type": "object", "required": ["type"], "properties": ["type": ["type": "string"]],
  ]
  static let storeVersion: JSON = [
    "type": "object", "required": ["store", "version"],
    "properties": ["store": ["type": "string"], "version": ["type": "integer", "minimum": 0]],
  ]
  static let historyResult: JSON = [
    "type": "object", "required": ["store", "first", "version", "entries"],
    "properties": [
      "store": ["type": "string"], "first": ["type": "integer", "minimum": 0],
      "version": ["type": "integer", "minimum": 0], "entries": ["type": "array"],
    ],
  ]
  static let stateResult: JSON = [
    "type": "object", "required": ["store", "version", "state"],
    "properties": [
      "store": ["type": "string"], "version": ["type": "integer", "minimum": 0], "state": true,
    ],
  ]

  /// An OpenRPC method object.
  static func method(
    _ name: String, _ summary: String, _ params: [Param], result: JSON, errors: [ErrorEntry] = []
  ) -> JSON {
    var object: JSONObject = [
      "name": .string(name), "summary": .string(summary), "paramStructure": "by-name",
      "params": .array(params.map(\.json)), "result": ["name": "result", "schema": result],
    ]
    if !errors.isEmpty { object["errors"] = .array(errors.map(\.json)) }
    return .object(object)
  }

  /// An OpenRPC content descriptor of one param.
  struct Param: Sendable {
    let json: JSON

    init(_ name: String, _ schema: JSON, required: Bool = false) {
      json = ["name": .string(name), "schema": schema, "required": .bool(required)]
    }

    /// `store` (required) and `path`, the params of the `state/` methods.
    static let storeAndPath: [Param] = [
      .init("store", OpenRPC.string, required: true), .init("path", OpenRPC.string),
    ]
  }

  /// An OpenRPC error object: a code of ``RPCError`` and its message.
  struct ErrorEntry: Sendable {
    let json: JSON

    init(_ code: Int, _ message: String) {
      json = ["code": .integer(Int64(code)), "message": .string(message)]
    }

    static let unknownStore = ErrorEntry(RPCError.unknownStoreCode, "Unknown store")
    static let unknownFeature = ErrorEntry(RPCError.unknownFeatureCode, "Unknown feature")
    static let storeExists = ErrorEntry(RPCError.storeExistsCode, "Store already exists")
    static let invalidParams = ErrorEntry(RPCError.invalidParamsCode, "Invalid params")
    static let actionRefused = ErrorEntry(RPCError.actionRefusedCode, "Action refused")
  }
}

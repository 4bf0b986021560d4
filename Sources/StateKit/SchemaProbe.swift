import Foundation
import JSON

/// Derives JSON Schemas (2020-12) from `Decodable` types by decoding them with a decoder that
/// records which keys are read with which types instead of reading data.
///
/// What it sees: struct properties (`decodeIfPresent` makes one optional), nested types,
/// arrays (one element is probed), string-keyed dictionaries, `CaseIterable` raw-value
/// enums (an `enum` of their raw values), `Date`/`URL`/`UUID` (strings with a format).
/// What it cannot see through is described loosely rather than guessed: an enum with
/// payloads nested inside a value is `{"type": "object"}`, and a type whose decoding fails
/// under the probe is `{}` (anything). It never traps: every failure falls back to `{}`.
enum SchemaProbe {
  /// Nesting past this depth reads empty arrays and absent optionals, so recursive types end.
  static let depthLimit = 10

  /// The schema of `type`; `sample`, an encoded value of it, lets the probe follow enums.
  static func schema<T: Decodable>(of type: T.Type, sample: JSON? = nil) -> JSON {
    let slot = SchemaSlot()
    do {
      _ = try probe(T.self, into: slot, context: ProbeContext(sample: sample, depth: 0))
      return slot.build()
    } catch {
      return [:]
    }
  }

  /// The wire schema of each named case of an enum with synthesized `Codable`:
  /// `{"type": "object", "properties": {"type": {"const": name}, fields...}, "required": ...}`.
  static func caseSchemas<T: Decodable>(of type: T.Type, cases: [String]) -> [String: JSON] {
    var schemas: [String: JSON] = [:]
    for name in cases {
      let root = SchemaSlot()
      var payload = JSONObject()
      payload.set("type", .string("object"))
      var properties = JSONObject()
      properties.set("type", ["const": .string(name)])
      var required: [JSON] = ["type"]
      let context = ProbeContext(sample: nil, depth: 0, probeCase: name)
      if (try? probe(T.self, into: root, context: context)) != nil,
        let caseSlot = root.properties.first(where: { $0.key == name })?.slot,
        case .object(let built) = caseSlot.build()
      {
        for (key, value) in built["properties"]?.objectValue?.members ?? JSONObject().members {
          properties.set(key, value)
        }
        required += built["required"]?.arrayValue ?? []
        payload.set("additionalProperties", false)
      }
      payload.set("properties", .object(properties))
      payload.set("required", .array(required))
      schemas[name] = .object(payload)
    }
    return schemas
  }

  static func probe<T: Decodable>(_ type: T.Type, into slot: SchemaSlot, context: ProbeContext)
    throws -> T
  {
    if let value = scalar(T.self, into: slot, sample: context.sample) { return value }
    if let enumeration = T.self as? any (CaseIterable & RawRepresentable).Type,
      let value = firstCase(of: enumeration, into: slot) as? T
    {
      return value
    }
    return try T(from: ProbeDecoder(slot: slot, context: context))
  }

  /// Records and returns a placeholder for the types that decode from one JSON scalar.
  static func scalar<T>(_ type: T.Type, into slot: SchemaSlot, sample: JSON?) -> T? {
    func record(_ schema: JSON, _ value: Any) -> T? {
      slot.fixed = schema
      return value as? T
    }
    switch T.self {
    case is Bool.Type: return record(["type": "boolean"], sample?.boolValue ?? false)
    case is String.Type: return record(["type": "string"], sample?.stringValue ?? "")
    case is Double.Type: return record(["type": "number"], sample?.doubleValue ?? 0)
    case is Float.Type: return record(["type": "number"], Float(sample?.doubleValue ?? 0))
    case is Int.Type: return record(["type": "integer"], Int(sample?.integerValue ?? 0))
    case is Int64.Type: return record(["type": "integer"], sample?.integerValue ?? 0)
    case is Int32.Type: return record(["type": "integer"], Int32(0))
    case is Int16.Type: return record(["type": "integer"], Int16(0))
    case is Int8.Type: return record(["type": "integer"], Int8(0))
    case is UInt.Type: return record(["type": "integer", "minimum": 0], UInt(0))
    case is UInt64.Type: return record(["type": "integer", "minimum": 0], UInt64(0))
    case is UInt32.Type: return record(["type": "integer", "minimum": 0], UInt32(0))
    case is UInt16.Type: return record(["type": "integer", "minimum": 0], UInt16(0))
    case is UInt8.Type: return record(["type": "integer", "minimum": 0], UInt8(0))
    case is Date.Type:
      return record(["type": "string", "format": "date-time"], Date(timeIntervalSince1970: 0))
    case is URL.Type: return record(["type": "string", "format": "uri"], URL(fileURLWithPath: "/"))
    case is UUID.Type: return record(["type": "string", "format": "uuid"], UUID())
    case is Decimal.Type: return record(["type": "number"], Decimal(0))
    case is JSON.Type: return record([:], JSON.null)
    default: return nil
    }
  }

  private static func firstCase<E: CaseIterable & RawRepresentable>(
    of type: E.Type, into slot: SchemaSlot
  ) -> E? {
    var values: [JSON] = []
    for value in E.allCases {
      switch value.rawValue {
      case let string as String: values.append(.string(string))
      case let int as Int: values.append(.integer(Int64(int)))
      default: return nil
      }
    }
    slot.fixed = ["enum": .array(values)]
    return E.allCases.first
  }
}

struct ProbeContext {
  var sample: JSON?
  var depth: Int
  /// The enum case offered by the root keyed container (for action and event schemas).
  var probeCase: String? = nil

  func child(_ sample: JSON?) -> ProbeContext {
    ProbeContext(sample: sample, depth: depth + 1)
  }
}

/// What the probe learned about one value.
final class SchemaSlot {
  var fixed: JSON?
  var isObject = false
  /// Keys came from the data (an enum or a dictionary), not from the type.
  var isEnumLike = false
  var properties: [(key: String, slot: SchemaSlot, required: Bool)] = []
  var additional: SchemaSlot?
  var items: SchemaSlot?

  func property(_ key: String, required: Bool) -> SchemaSlot {
    if let index = properties.firstIndex(where: { $0.key == key }) {
      properties[index].required = properties[index].required || required
      return properties[index].slot
    }
    let slot = SchemaSlot()
    properties.append((key, slot, required))
    return slot
  }

  func build() -> JSON {
    if let fixed { return fixed }
    if let additional {
      return ["type": "object", "additionalProperties": additional.build()]
    }
    if isObject {
      if isEnumLike { return ["type": "object"] }
      var members = JSONObject()
      for property in properties {
        // An optional member may be absent or null: the decoder reads both as nil, and
        // features write absent values as null so a view keeps one shape.
        let member = property.slot.build()
        let nullable =
          property.required || member == [:] ? member : ["anyOf": [member, ["type": "null"]]]
        members.set(property.key, nullable)
      }
      let required = properties.filter(\.required).map { JSON.string($0.key) }
      var schema: JSONObject = ["type": "object", "properties": .object(members)]
      if !required.isEmpty { schema.set("required", .array(required)) }
      return .object(schema)
    }
    if let items { return ["type": "array", "items": items.build()] }
    return [:]
  }
}

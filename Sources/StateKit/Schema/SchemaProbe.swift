import FoundationEssentials
import JSON

/// Derives JSON Schemas (2020-12) from `Decodable` types by decoding them with a decoder that
/// records which keys are read with which types instead of reading data.
///
/// What it sees: struct properties (`decodeIfPresent` makes one optional), nested types,
/// arrays (one element is probed), string-keyed dictionaries, `CaseIterable` raw-value enums
/// (an `enum` of their raw values), `Date`/`URL`/`UUID` (strings with a format), a
/// ``TaggedUnion`` (a `oneOf`, one branch per tag) and a ``SchemaDescribing`` type (its own
/// schema). What it cannot see is never guessed: a raw-value enum that is not `CaseIterable`,
/// an enum with payloads nested in a value, a type that refuses to decode under the probe are
/// each a ``SchemaProblem`` with its pointer, and the schema says `{}` there (a loose
/// `{"type": "object"}` for an enum that decoded one case). It never traps.
enum SchemaProbe {
  /// Nesting past this depth reads empty arrays and absent optionals, so recursive types end.
  static let depthLimit = 10

  /// Who writes the described values. The server writes an optional as `null` (the key is
  /// always present, so a view keeps one shape); a client may also leave it out.
  enum Writer {
    case server, client
  }

  /// The schema of `type`; `sample`, an encoded value of it, lets the probe follow enums.
  /// Problems are appended to `problems`, their pointers under `pointer`.
  static func schema<T: Decodable>(
    of type: T.Type, sample: JSON? = nil, writer: Writer = .server, pointer: String = "",
    problems: inout [SchemaProblem]
  ) -> JSON {
    let log = ProblemLog()
    let slot = SchemaSlot()
    let context = ProbeContext(sample: sample, depth: 0, pointer: pointer, log: log)
    if (try? probe(T.self, into: slot, context: context)) == nil { slot.fixed = [:] }
    problems += log.problems
    return slot.build(writer)
  }

  /// The wire schema of each named case of an enum with synthesized `Codable`:
  /// `{"type": "object", "properties": {"type": {"const": name}, fields...}, "required": ...}`.
  static func caseSchemas<T: Decodable>(
    of type: T.Type, cases: [String], writer: Writer, pointer: String = "",
    problems: inout [SchemaProblem]
  ) -> [String: JSON] {
    var schemas: [String: JSON] = [:]
    let log = ProblemLog()
    for name in cases {
      let root = SchemaSlot()
      var payload = JSONObject()
      payload.set("type", .string("object"))
      var properties = JSONObject()
      properties.set("type", ["const": .string(name)])
      var required: [JSON] = ["type"]
      let context = ProbeContext(
        sample: nil, depth: 0, pointer: pointer, log: log, probeCase: name)
      if (try? probe(T.self, into: root, context: context)) != nil,
        let caseSlot = root.properties.first(where: { $0.key == name })?.slot,
        case .object(let built) = caseSlot.build(writer)
      {
        for (key, value) in built["properties"]?.objectValue?.members ?? JSONObject().members {
          properties.set(key, value)
        }
        required += built["required"]?.arrayValue ?? []
        payload.set("additionalProperties", false)
      } else if !log.problems.contains(where: {
        $0.pointer.hasPrefix(pointer + "/" + WireFormat.escaped(name))
      }) {
        log.record(
          SchemaProblem(
            pointer: pointer + "/" + WireFormat.escaped(name),
            reason: "\"\(name)\" is not a case of \(T.self)"))
      }
      payload.set("properties", .object(properties))
      payload.set("required", .array(required))
      schemas[name] = .object(payload)
    }
    problems += log.problems
    return schemas
  }

  static func probe<T: Decodable>(_ type: T.Type, into slot: SchemaSlot, context: ProbeContext)
    throws -> T
  {
    if let value = scalar(T.self, into: slot, sample: context.sample) { return value }
    if let enumeration = T.self as? any (CaseIterable & RawRepresentable).Type,
      let value = caseValue(of: enumeration, into: slot, sample: context.sample) as? T
    {
      return value
    }
    if let described = T.self as? any SchemaDescribing.Type,
      let value = try describe(described, into: slot, context: context) as? T
    {
      return value
    }
    if let union = T.self as? any TaggedUnion.Type,
      let value = try branches(of: union, into: slot, context: context) as? T
    {
      return value
    }
    var context = context
    // A raw-value enum that is not CaseIterable decodes from a sample's value and would pass
    // for a plain string: probed without one, it refuses the placeholder and says so.
    if T.self is any RawRepresentable.Type { context.sample = nil }
    return try decode(T.self, into: slot, context: context)
  }

  /// `T(from:)` under the probe; a failure is recorded where it happened (once).
  static func decode<T: Decodable>(_ type: T.Type, into slot: SchemaSlot, context: ProbeContext)
    throws -> T
  {
    let value: T
    do {
      value = try T(from: ProbeDecoder(slot: slot, context: context))
    } catch let failure as ProbeFailure {
      throw failure
    } catch {
      if slot.isEnumLike {
        context.log.record(context, enumWithPayloads(T.self))
      } else if T.self is any RawRepresentable.Type {
        context.log.record(
          context,
          "\(T.self) is a raw-value enum that is not CaseIterable: conform it to CaseIterable "
            + "so that its schema lists its values")
      } else {
        context.log.record(context, "\(T.self) does not decode under the schema probe: \(error)")
      }
      throw ProbeFailure()
    }
    // Decoded (a sample named a case) but only that case was seen: the schema keeps a loose
    // `{"type": "object"}` there, and the problem says so.
    if slot.isEnumLike { context.log.record(context, enumWithPayloads(T.self)) }
    return value
  }

  private static func enumWithPayloads(_ type: Any.Type) -> String {
    "\(type) is an enum with associated values, whose cases a decoder cannot list: give it a "
      + "wire form (TaggedUnion, SchemaDescribing)"
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

  /// An `enum` of the raw values; the sample's case if it names one, else the first.
  private static func caseValue<E: CaseIterable & RawRepresentable>(
    of type: E.Type, into slot: SchemaSlot, sample: JSON?
  ) -> E? {
    var values: [JSON] = []
    var chosen: E?
    for value in E.allCases {
      let raw: JSON
      switch value.rawValue {
      case let string as String: raw = .string(string)
      case let int as Int: raw = .integer(Int64(int))
      default: return nil
      }
      values.append(raw)
      if chosen == nil, raw == sample { chosen = value }
    }
    slot.fixed = ["enum": .array(values)]
    return chosen ?? E.allCases.first
  }

  /// The type's own schema, and a value decoded from the simplest JSON it accepts.
  private static func describe<D: SchemaDescribing>(
    _ type: D.Type, into slot: SchemaSlot, context: ProbeContext
  ) throws -> D {
    do throws(SchemaProblem) {
      slot.fixed = try D.wireSchema()
    } catch {
      context.log.record(
        SchemaProblem(pointer: context.pointer + error.pointer, reason: error.reason))
      throw ProbeFailure()
    }
    let sample = SchemaSample.value(of: slot.fixed ?? [:])
    do {
      return try JSONValueDecoder().decode(D.self, from: sample)
    } catch {
      context.log.record(
        context, "\(D.self) refuses \(sample), the simplest value its schema accepts: \(error)")
      throw ProbeFailure()
    }
  }

  /// One branch per tag, each probed with the tag as its sample.
  private static func branches<U: TaggedUnion>(
    of type: U.Type, into slot: SchemaSlot, context: ProbeContext
  ) throws -> U {
    slot.tagKey = U.tagKey
    var first: U?
    for tag in U.Tag.allCases {
      let branch = SchemaSlot()
      var sample = JSONObject()
      sample.set(U.tagKey, .string(tag.rawValue))
      var branchContext = context
      branchContext.sample = .object(sample)
      let value = try decode(U.self, into: branch, context: branchContext)
      first = first ?? value
      slot.branches.append((tag.rawValue, branch))
    }
    guard let first else {
      context.log.record(context, "\(U.self).Tag has no cases")
      throw ProbeFailure()
    }
    return first
  }
}

/// Thrown once a failure is recorded, so that it is recorded only where it happened.
struct ProbeFailure: Error {}

/// The problems met while probing one feature.
final class ProblemLog {
  private(set) var problems: [SchemaProblem] = []

  func record(_ problem: SchemaProblem) { problems.append(problem) }

  func record(_ context: ProbeContext, _ reason: String) {
    record(SchemaProblem(pointer: context.pointer, reason: reason))
  }
}

struct ProbeContext {
  var sample: JSON?
  var depth: Int
  /// Where the probed value is: a JSON Pointer, `*` for any element.
  var pointer: String
  let log: ProblemLog
  /// The enum case offered by the root keyed container (for action and event schemas).
  var probeCase: String? = nil

  func child(_ key: String, sample: JSON?) -> ProbeContext {
    ProbeContext(
      sample: sample, depth: depth + 1, pointer: pointer + "/" + WireFormat.escaped(key), log: log)
  }
}

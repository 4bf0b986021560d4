import JSON

/// A feature's wire type as bindings declare it: the JSON Schema subset the schema probe
/// writes (`type`, `properties`/`required`, `items`, `additionalProperties`, `enum`, `const`,
/// `anyOf`/`oneOf`), read back into a tree each language renders.
indirect enum BindingType: Equatable {
  case string, integer, number, boolean, null
  /// Any JSON value (`{}`: the Swift type was `JSON`).
  case any
  case literal(JSON)
  case array(BindingType)
  /// An object with any keys, each value of one type.
  case dictionary(BindingType)
  case object([BindingField])
  case union([BindingType])

  /// One member of an object. `isRequired` is false only where a writer may leave it out (an
  /// action's optional field); a `null` value is in `type`, so optional and null stay apart.
  struct BindingField: Equatable {
    var name: String
    var type: BindingType
    var isRequired: Bool
  }

  /// Reads `schema`; a keyword it does not know is an error naming its pointer, so a schema
  /// richer than the bindings can say never passes for a looser type.
  init(schema: JSON, at pointer: String) throws(CodegenError) {
    guard case .object(let object) = schema else {
      throw CodegenError("\(pointer): expected a schema object")
    }
    for key in object.keys where !Self.keywords.contains(key) {
      throw CodegenError("\(pointer): the bindings cannot say \"\(key)\" (in \(schema))")
    }
    if let constant = object["const"] {
      self = .literal(constant)
      return
    }
    if let values = object["enum"]?.arrayValue {
      self = values.count == 1 ? .literal(values[0]) : .union(values.map(BindingType.literal))
      return
    }
    for keyword in ["oneOf", "anyOf"] {
      guard let branches = object[keyword]?.arrayValue else { continue }
      var types: [BindingType] = []
      for (index, branch) in branches.enumerated() {
        types.append(try BindingType(schema: branch, at: "\(pointer)/\(keyword)/\(index)"))
      }
      self = .union(types)
      return
    }
    switch object["type"]?.stringValue {
    case nil where object.isEmpty: self = .any
    case "string": self = .string
    case "integer": self = .integer
    case "number": self = .number
    case "boolean": self = .boolean
    case "null": self = .null
    case "array":
      self = .array(try BindingType(schema: object["items"] ?? [:], at: pointer + "/items"))
    case "object":
      self = try Self.object(object, at: pointer)
    default:
      throw CodegenError("\(pointer): no binding for the schema \(schema)")
    }
  }

  /// The keywords the bindings say, and the few they leave to the server's validation (a
  /// format or a minimum only narrows a string or an integer, which stays its type).
  static let keywords: Set<String> = [
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
    "oneOf", "format", "minimum", "title", "description", "$comment",
  ]

  private static func object(_ object: JSONObject, at pointer: String) throws(CodegenError)
    -> BindingType
  {
    guard let properties = object["properties"]?.objectValue else {
      let values = object["additionalProperties"]
      guard let values, values != false else { return .dictionary(.any) }
      return .dictionary(try BindingType(schema: values, at: pointer + "/additionalProperties"))
    }
    let required = Set((object["required"]?.arrayValue ?? []).compactMap(\.stringValue))
    var fields: [BindingField] = []
    for (name, member) in properties.members {
      fields.append(
        BindingField(
          name: name,
          type: try BindingType(schema: member, at: pointer + "/properties/" + name),
          isRequired: required.contains(name)))
    }
    return .object(fields)
  }

  /// The `const` of member `name`, for naming a union's branch after its tag.
  func tag(_ name: String) -> String? {
    guard case .object(let fields) = self,
      case .literal(.string(let tag)) = fields.first(where: { $0.name == name })?.type
    else { return nil }
    return tag
  }
}

/// Why bindings could not be generated, for a person.
struct CodegenError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

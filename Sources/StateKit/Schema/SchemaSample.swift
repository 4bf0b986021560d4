import JSON

/// The simplest value a schema accepts (the probe's schemas, not all of JSON Schema): what the
/// probe decodes a ``SchemaDescribing`` type from, to go on through what contains it.
enum SchemaSample {
  static func value(of schema: JSON) -> JSON {
    if let constant = schema["const"] { return constant }
    if let first = schema["enum"]?.arrayValue?.first { return first }
    for combinator in ["oneOf", "anyOf"] {
      if let first = schema[combinator]?.arrayValue?.first { return value(of: first) }
    }
    switch schema["type"]?.stringValue {
    case "object":
      var object = JSONObject()
      let required = Set((schema["required"]?.arrayValue ?? []).compactMap(\.stringValue))
      for (key, member) in schema["properties"]?.objectValue?.members ?? JSONObject().members
      where required.contains(key) {
        object.set(key, value(of: member))
      }
      return .object(object)
    case "array": return []
    case "string": return ""
    case "integer", "number": return 0
    case "boolean": return false
    default: return .null
    }
  }
}

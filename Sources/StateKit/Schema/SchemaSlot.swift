import JSON

/// What the probe learned about one value, built into a schema once the probe is done.
final class SchemaSlot {
  var fixed: JSON?
  var isObject = false
  /// Keys came from the data (an enum with payloads), not from the type.
  var isEnumLike = false
  var properties: [(key: String, slot: SchemaSlot, required: Bool)] = []
  var additional: SchemaSlot?
  var items: SchemaSlot?
  /// A ``TaggedUnion``: the member naming the case, and one object per tag.
  var tagKey: String?
  var branches: [(tag: String, slot: SchemaSlot)] = []

  func property(_ key: String, required: Bool) -> SchemaSlot {
    if let index = properties.firstIndex(where: { $0.key == key }) {
      properties[index].required = properties[index].required || required
      return properties[index].slot
    }
    let slot = SchemaSlot()
    properties.append((key, slot, required))
    return slot
  }

  func build(_ writer: SchemaProbe.Writer) -> JSON {
    if let fixed { return fixed }
    if let tagKey { return .object(["oneOf": .array(branches.map { branch($0, tagKey, writer) })]) }
    if let additional {
      return ["type": "object", "additionalProperties": additional.build(writer)]
    }
    if isObject {
      if isEnumLike { return ["type": "object"] }
      var members = JSONObject()
      for property in properties {
        // An optional member is null or, from a client, absent: the decoder reads both as
        // nil, and the server writes nil as null so that a value keeps one shape.
        let member = property.slot.build(writer)
        let nullable =
          property.required || member == [:] ? member : ["anyOf": [member, ["type": "null"]]]
        members.set(property.key, nullable)
      }
      let required = properties.filter { $0.required || writer == .server }.map {
        JSON.string($0.key)
      }
      var schema: JSONObject = ["type": "object", "properties": .object(members)]
      if !required.isEmpty { schema.set("required", .array(required)) }
      return .object(schema)
    }
    if let items { return ["type": "array", "items": items.build(writer)] }
    return [:]
  }

  /// One tag's object: the tag a required `const`, nothing beyond the members read.
  private func branch(
    _ branch: (tag: String, slot: SchemaSlot), _ tagKey: String, _ writer: SchemaProbe.Writer
  ) -> JSON {
    let built = branch.slot.build(writer)
    var properties = JSONObject()
    properties.set(tagKey, ["const": .string(branch.tag)])
    for (key, value) in built["properties"]?.objectValue?.members ?? JSONObject().members
    where key != tagKey {
      properties.set(key, value)
    }
    let required =
      [JSON.string(tagKey)] + (built["required"]?.arrayValue ?? []).filter { $0 != .string(tagKey) }
    return [
      "type": "object", "properties": .object(properties), "required": .array(required),
      "additionalProperties": false,
    ]
  }
}

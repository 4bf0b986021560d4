import JSON

/// One feature as its bindings declare it, read from its `features/list` entry: the
/// published state, and its public actions and events in the order the feature lists them.
struct FeatureBinding {
  /// The wire name, `notes`.
  var name: String
  /// The name's type-name form, `Notes`.
  var typeName: String
  var state: BindingType
  var actions: [(name: String, type: BindingType)]
  var events: [(name: String, type: BindingType)]

  init(listed feature: JSON) throws(CodegenError) {
    guard let name = feature["name"]?.stringValue, let schema = feature["schema"] else {
      throw CodegenError("a feature without a name or a schema: \(feature)")
    }
    self.name = name
    typeName = Self.typeName(name)
    state = try BindingType(schema: schema["state"] ?? [:], at: "/\(name)/state")
    actions = try Self.cases(feature["actions"], schema["actions"], at: "/\(name)/actions")
    events = try Self.cases(feature["events"], schema["events"], at: "/\(name)/events")
  }

  private static func cases(_ names: JSON?, _ schemas: JSON?, at pointer: String)
    throws(CodegenError) -> [(name: String, type: BindingType)]
  {
    var cases: [(name: String, type: BindingType)] = []
    for name in (names?.arrayValue ?? []).compactMap(\.stringValue) {
      guard let schema = schemas?[name] else {
        throw CodegenError("\(pointer)/\(name): listed without a schema")
      }
      cases.append((name, try BindingType(schema: schema, at: pointer + "/" + name)))
    }
    return cases
  }

  /// `setQuantity` → `SetQuantity`, `my-store` → `MyStore`: letters and digits, each word
  /// capitalized, never starting with a digit.
  static func typeName(_ name: String) -> String {
    var result = ""
    var capitalizeNext = true
    for character in name {
      guard character.isASCII, character.isLetter || character.isNumber else {
        capitalizeNext = true
        continue
      }
      result += capitalizeNext ? character.uppercased() : String(character)
      capitalizeNext = false
    }
    if result.first?.isNumber == true { result = "F" + result }
    return result
  }
}

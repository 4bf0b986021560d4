import JSON

/// A type whose JSON form the schema probe cannot see through (a custom `init(from:)` that
/// reads something other than the fields it stores), describing it itself.
///
/// The probe still needs a value of the type to go on decoding what contains it: it decodes
/// one from the simplest value `wireSchema` accepts.
public protocol SchemaDescribing: Decodable {
  /// The JSON Schema (2020-12) of this type's wire form.
  static func wireSchema() throws(SchemaProblem) -> JSON
}

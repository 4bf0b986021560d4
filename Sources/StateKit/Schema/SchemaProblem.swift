/// Why part of a type has no JSON Schema: where in the value (a JSON Pointer, `*` standing for
/// any array element or dictionary value) and what to change.
///
/// A feature's descriptor lists them in ``FeatureDescriptor/schemaProblems``; the schema then
/// says `{}` (anything) at `pointer`, or a loose `{"type": "object"}`, which a test must not
/// accept (and `stateserver codegen` refuses):
///
/// ```swift
/// #expect(MyFeature().descriptor().schemaProblems.isEmpty)
/// ```
public struct SchemaProblem: Error, Sendable, Equatable, CustomStringConvertible {
  /// Where: `/state/notes/*/syncStatus`, `/actions/resolveConflict/keep`.
  public var pointer: String
  /// What could not be described and how to fix it, for a person.
  public var reason: String

  /// A problem at `pointer`.
  public init(pointer: String, reason: String) {
    self.pointer = pointer
    self.reason = reason
  }

  /// The pointer and the reason, for logs and test failures.
  public var description: String { "\(pointer): \(reason)" }
}

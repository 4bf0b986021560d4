import JSON
import StateKit

/// A child feature's action carried inside a parent's, in the child's own wire shape:
/// `{"type": "users", "action": {"type": "select", "id": 42}}`. Only the child's public
/// actions decode, so a client cannot forge the child's internal results through the parent.
///
/// ```swift
/// enum Action { case users(action: ChildAction<UsersFeature>) }
/// let action = Action.users(action: ChildAction(.select(id: 42)))
/// ```
public struct ChildAction<Child: Feature>: Codable, Sendable {
  /// The child's action.
  public var action: Child.Action

  /// Wraps a child action.
  public init(_ action: Child.Action) {
    self.action = action
  }

  public init(from decoder: any Decoder) throws {
    let wire = try JSON(from: decoder)
    let prefix = JSONDecodingError.pointer(decoder.codingPath)
    do {
      action = try WireFormat.decodeAction(
        Child.Action.self, from: wire, allowed: Set(Child.caseNames.publicActions))
    } catch .refused(let type, let reason) {
      var error = JSONDecodingError(pointer: prefix + "/type", reason: reason)
      error.refusedType = type
      throw error
    } catch .invalid(let pointer, let reason) {
      throw JSONDecodingError(pointer: prefix + pointer, reason: reason)
    }
  }

  public func encode(to encoder: any Encoder) throws {
    try WireFormat.encode(action).encode(to: encoder)
  }
}

extension ChildAction: Equatable where Child.Action: Equatable {}

extension ChildAction: SchemaDescribing {
  /// The child's public actions, a `oneOf` discriminated by `type`.
  public static func wireSchema() throws(SchemaProblem) -> JSON {
    try Child.publicActionSchema()
  }
}

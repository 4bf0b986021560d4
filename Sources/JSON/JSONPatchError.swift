/// Why a patch could not be decoded or applied: which operation, which field, and what was
/// wrong.
public struct JSONPatchError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The family of failure, for code that reacts to it.
  public enum Kind: String, Sendable, Equatable {
    /// The wire form is not a valid patch (missing or mistyped member, unknown op).
    case malformed
    /// A path (or `from`) designates no value, or its parent does not exist.
    case pathNotFound
    /// An array index token is out of range, malformed (`01`, `x`) or `-` where a value is
    /// needed.
    case invalidIndex
    /// A `test` operation found a different value.
    case testFailed
    /// A `move` whose `path` lies inside its own `from`.
    case moveIntoChild
  }

  /// The family of failure.
  public var kind: Kind
  /// The position of the failing operation in the patch; `nil` when the patch as a whole is
  /// malformed (not an array).
  public var operationIndex: Int?
  /// The member of the operation at fault (`"op"`, `"path"`, `"from"`, `"value"`), if any.
  public var field: String?
  /// What went wrong and what would have been right.
  public var reason: String

  /// An error of `kind` for the operation at `operationIndex`, about `field`.
  public init(kind: Kind, operationIndex: Int?, field: String?, reason: String) {
    self.kind = kind
    self.operationIndex = operationIndex
    self.field = field
    self.reason = reason
  }

  /// One line for a person, e.g. `JSON Patch operation 2 ("path"): "/a/b" does not exist: ...`.
  public var description: String {
    var text = "JSON Patch"
    if let operationIndex { text += " operation \(operationIndex)" }
    if let field { text += " (\"\(field)\")" }
    return text + ": " + reason
  }
}

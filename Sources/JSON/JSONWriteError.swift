/// Why a `JSON` value has no JSON text: it holds a non-finite double, or nests deeper than
/// ``JSON/maximumDepth``.
///
/// ```swift
/// do { _ = try JSON.array([.double(.nan)]).serialized() } catch {
///   error.pointer  // "/0"
/// }
/// ```
public struct JSONWriteError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The class of failure.
  public enum Kind: String, Sendable, Equatable {
    /// NaN or an infinity, which JSON cannot express.
    case nonFiniteDouble
    /// Values nested deeper than ``JSON/maximumDepth``: the text would not parse.
    case tooDeep
  }

  /// The class of failure.
  public var kind: Kind
  /// RFC 6901 JSON Pointer of the offending value within the written one.
  public var pointer: String
  /// What was wrong, for a person.
  public var reason: String

  /// An error as the writer reports it; public so tests and fakes can build one.
  public init(kind: Kind, pointer: String, reason: String) {
    self.kind = kind
    self.pointer = pointer
    self.reason = reason
  }

  /// Pointer and reason on one line, for logs.
  public var description: String {
    "cannot write JSON at '\(pointer)': \(reason)"
  }
}

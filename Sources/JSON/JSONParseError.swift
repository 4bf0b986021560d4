/// Why a text could not be parsed as JSON, and where.
///
/// The server answers `-32700` with `line`, `column`, `position` and `reason`, except for
/// ``Kind-swift.enum/duplicateKey``, which it answers as an invalid request (`-32600`): the text
/// is well-formed, but which value the sender meant is ambiguous.
///
/// ```swift
/// do { _ = try JSON(parsing: "[1,x]") } catch {
///   error.kind    // .syntax
///   error.reason  // "invalid token near 'x'"
/// }
/// ```
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The class of failure, for callers that answer them differently.
  public enum Kind: String, Sendable, Equatable {
    /// Not JSON: an invalid token, a missing comma, trailing content, a lone surrogate escape,
    /// a byte order mark.
    case syntax
    /// The input ended inside a value (or was empty).
    case unexpectedEnd
    /// A byte sequence that is not UTF-8.
    case invalidUTF8
    /// A raw NUL byte (0x00) in the input; `"\u0000"` inside a string is fine.
    case nulByte
    /// An object key containing `\u0000`: jansson cannot hold one, so ``JSON/init(parsing:options:)-(UnsafeRawBufferPointer,_)``
    /// reads such text again in Swift and never throws this kind.
    case nulInKey
    /// An object has the same key twice (see ``JSONParseOptions/allowDuplicateKeys``).
    case duplicateKey
    /// An integer outside `Int64`, or a number too large for a `Double`.
    case numberOutOfRange
    /// Values nested deeper than ``JSON/maximumDepth``.
    case tooDeep
    /// The parser could not allocate memory.
    case outOfMemory
  }

  /// The class of failure (the server answers `.duplicateKey` with -32600, others -32700).
  public var kind: Kind
  /// 1-based line of the offending character.
  public var line: Int
  /// 1-based column (in characters, not bytes) of the last character read on `line`.
  public var column: Int
  /// Bytes read when the error was found, the offending one included (so the offending byte
  /// is at offset `position - 1` for single-byte problems such as a stray NUL).
  public var position: Int
  /// What was wrong, for a person: "invalid token near 'x'".
  public var reason: String

  /// A member of well-formed text refused for what it holds: a repeated key, a number beyond
  /// `Int64` or `Double`.
  public struct Refusal: Sendable, Equatable {
    /// ``Kind-swift.enum/duplicateKey`` or ``Kind-swift.enum/numberOutOfRange``.
    public var kind: Kind
    /// Where the member is, from the root of the text.
    public var pointer: JSONPointer
    /// What was wrong, for a person.
    public var reason: String

    /// A refusal of the member at `pointer`.
    public init(kind: Kind, pointer: JSONPointer, reason: String) {
      self.kind = kind
      self.pointer = pointer
      self.reason = reason
    }
  }

  /// For well-formed text refused for what it holds: every refused member, in text order (the
  /// error's own kind, location and reason are the first one's). Empty when the text is not
  /// JSON at all.
  public var refusals: [Refusal] = []
  /// The value of that well-formed text with `null` in place of each refused member, so a caller
  /// can still read the rest (the server reads a request's `id` from it); nil when the text is
  /// not JSON at all.
  public var remainder: JSON? = nil

  /// An error as the parser reports it; public so tests and fakes can build one.
  public init(kind: Kind, line: Int, column: Int, position: Int, reason: String) {
    self.kind = kind
    self.line = line
    self.column = column
    self.position = position
    self.reason = reason
  }

  /// Kind, location and reason on one line, for logs.
  public var description: String {
    "JSON parse error (\(kind.rawValue)) at line \(line), column \(column), "
      + "position \(position): \(reason)"
  }
}

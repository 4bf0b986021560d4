/// An RFC 6901 JSON Pointer: the path of one value inside a document, as a list of
/// reference tokens.
///
/// The empty pointer (``root``) is the whole document. In text form every token is preceded
/// by `/`, with `~` written `~0` and `/` written `~1`; tokens are kept unescaped here.
///
/// ```swift
/// let pointer = try JSONPointer(parsing: "/items/0/a~1b")
/// pointer.tokens       // ["items", "0", "a/b"]
/// pointer.description  // "/items/0/a~1b"
/// let document: JSON = ["items": [["a/b": 1]]]
/// pointer.value(in: document)  // .integer(1)
/// ```
public struct JSONPointer: Hashable, Sendable {
  /// The reference tokens, unescaped, outermost first.
  public var tokens: [String]

  /// A pointer made of `tokens` (already unescaped).
  public init(tokens: [String]) {
    self.tokens = tokens
  }

  /// The empty pointer: the whole document.
  public static let root = JSONPointer(tokens: [])

  /// Parses the text form of a pointer: `""`, or `/` followed by tokens separated by `/`.
  ///
  /// Throws for text that does not start with `/` and for a `~` that is not followed by
  /// `0` or `1`.
  public init(parsing text: String) throws(JSONPointerError) {
    guard !text.isEmpty else {
      tokens = []
      return
    }
    let scalars = Array(text.unicodeScalars)
    guard scalars[0] == "/" else {
      throw JSONPointerError(
        text: text, offset: 0,
        reason: "a pointer is empty or starts with \"/\" (did you mean \"/\(text)\"?)")
    }
    var parsed: [String] = []
    var token = String.UnicodeScalarView()
    var offset = 1
    while offset < scalars.count {
      let scalar = scalars[offset]
      switch scalar {
      case "/":
        parsed.append(String(token))
        token = String.UnicodeScalarView()
      case "~":
        let next = offset + 1 < scalars.count ? scalars[offset + 1] : nil
        switch next {
        case "0": token.append("~")
        case "1": token.append("/")
        default:
          throw JSONPointerError(
            text: text, offset: offset,
            reason: "\"~\" must be followed by \"0\" (for \"~\") or \"1\" (for \"/\")")
        }
        offset += 1
      default:
        token.append(scalar)
      }
      offset += 1
    }
    parsed.append(String(token))
    tokens = parsed
  }

  /// Whether this is the empty pointer, the whole document.
  public var isRoot: Bool { tokens.isEmpty }

  /// The pointer one level up; the root's parent is `nil`.
  public var parent: JSONPointer? {
    isRoot ? nil : JSONPointer(tokens: Array(tokens.dropLast()))
  }

  /// This pointer extended by one member name or index token.
  public func appending(_ token: String) -> JSONPointer {
    var copy = self
    copy.tokens.append(token)
    return copy
  }

  /// This pointer extended by an array index.
  public func appending(index: Int) -> JSONPointer {
    appending(String(index))
  }

  /// Whether `other` is this pointer or lies below it (the root is a prefix of every pointer).
  public func isPrefix(of other: JSONPointer) -> Bool {
    tokens.count <= other.tokens.count && other.tokens.starts(with: tokens)
  }

  /// Whether `other` lies strictly below this pointer.
  public func isProperPrefix(of other: JSONPointer) -> Bool {
    tokens.count < other.tokens.count && other.tokens.starts(with: tokens)
  }

  /// The value this pointer designates in `document`, or `nil` when there is none (a missing
  /// member, an index out of range or malformed, `-`, or a token applied to a scalar).
  public func value(in document: JSON) -> JSON? {
    var current = document
    for token in tokens {
      switch current {
      case .object(let object):
        guard let member = object[token] else { return nil }
        current = member
      case .array(let elements):
        guard let index = JSONPointer.arrayIndex(token), index < elements.count else {
          return nil
        }
        current = elements[index]
      default:
        return nil
      }
    }
    return current
  }

  /// The array index a token spells: decimal digits without leading zeros (RFC 6901 §4).
  /// `nil` for anything else, including `-` and numbers too large for `Int`.
  public static func arrayIndex(_ token: String) -> Int? {
    let utf8 = token.utf8
    guard let first = utf8.first, first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
      return nil
    }
    if first == UInt8(ascii: "0") { return utf8.count == 1 ? 0 : nil }
    var value = 0
    for byte in utf8 {
      guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
      let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
      let (sum, overflow2) = times10.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
      guard !overflow1, !overflow2 else { return nil }
      value = sum
    }
    return value
  }

  /// Why `token` is not a valid index into an array of `count` elements, for error messages.
  static func indexProblem(_ token: String, count: Int, allowEnd: Bool) -> String {
    if token == "-" {
      return "\"-\" (past the end) only names a place to add, not an existing element"
    }
    if let index = arrayIndex(token) {
      let limit = allowEnd ? "0...\(count)" : (count == 0 ? "none (empty)" : "0..<\(count)")
      return "index \(index) is out of range (array of \(count), valid: \(limit))"
    }
    if token.utf8.count > 1, token.utf8.first == UInt8(ascii: "0"),
      token.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
    {
      return "array index \"\(token)\" has a leading zero"
    }
    return "\"\(token)\" is not an array index (decimal digits\(allowEnd ? " or \"-\"" : ""))"
  }
}

extension JSONPointer: CustomStringConvertible {
  /// The text form, with `~` and `/` escaped: `"/items/0/a~1b"`; the root is `""`.
  public var description: String {
    // The usual pointer of a published patch, one plain member name (`/count`): its bytes
    // written once after the slash, instead of a scan and two appends, since this runs for
    // every published operation.
    if tokens.count == 1, let text = Self.slashed(tokens[0]) { return text }
    var text = ""
    for token in tokens {
      text.append("/")
      if Self.needsEscaping(token) {
        for scalar in token.unicodeScalars {
          switch scalar {
          case "~": text.append("~0")
          case "/": text.append("~1")
          default: text.unicodeScalars.append(scalar)
          }
        }
      } else {
        text.append(token)
      }
    }
    return text
  }

  /// `"/" + token` for a token that needs no escaping; nil for one that does.
  private static func slashed(_ token: String) -> String? {
    var token = token
    return token.withUTF8 { bytes -> String? in
      if bytes.contains(where: { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }) {
        return nil
      }
      return String(unsafeUninitializedCapacity: bytes.count + 1) { text in
        text[0] = UInt8(ascii: "/")
        _ = UnsafeMutableBufferPointer(rebasing: text[1...]).initialize(fromContentsOf: bytes)
        return bytes.count + 1
      }
    }
  }

  private static func needsEscaping(_ token: String) -> Bool {
    var token = token
    return token.withUTF8 { bytes in
      bytes.contains { $0 == UInt8(ascii: "~") || $0 == UInt8(ascii: "/") }
    }
  }
}

extension JSONPointer: ExpressibleByStringLiteral {
  /// A pointer written in source. A malformed literal is a programming error and traps; use
  /// ``init(parsing:)`` for text that comes from outside.
  public init(stringLiteral text: String) {
    do {
      try self.init(parsing: text)
    } catch {
      preconditionFailure("malformed JSON Pointer literal \"\(text)\": \(error.reason)")
    }
  }
}

/// A malformed JSON Pointer text, with where and why.
public struct JSONPointerError: Error, Equatable, Sendable, CustomStringConvertible {
  /// The text that failed to parse.
  public var text: String
  /// The offset in Unicode scalars where the problem starts.
  public var offset: Int
  /// What is wrong and what would be right.
  public var reason: String

  /// An error about `text` at scalar `offset`, saying why in `reason`.
  public init(text: String, offset: Int, reason: String) {
    self.text = text
    self.offset = offset
    self.reason = reason
  }

  /// One line for a person: the text, the offset and the reason.
  public var description: String {
    "malformed JSON Pointer \"\(text)\" at offset \(offset): \(reason)"
  }
}

/// A JSON parser in Swift for the texts jansson refuses although they are well-formed: a key
/// holding U+0000 (jansson cannot store one), a repeated key, a number outside `Int64` or
/// `Double`. It runs only after jansson failed for one of those reasons, so its speed does not
/// matter; what matters is that it never stops at them: each refused member is recorded with
/// its pointer, `null` stands in its place, and parsing goes on, so a caller can still read the
/// rest of the message (a request's `id`) and answer it.
///
/// It accepts exactly the grammar of RFC 8259 that jansson accepts (same depth limit, same
/// strict UTF-8, no lone surrogate escapes), checked against JSONTestSuite in the tests.
struct JSONRecoveringParser {
  /// A refused member, and how many bytes had been read when it was found.
  struct Refusal {
    var member: JSONParseError.Refusal
    var position: Int
  }

  private let bytes: UnsafeRawBufferPointer
  private let allowDuplicateKeys: Bool
  private var offset = 0
  private var path: [String] = []
  private var refusals: [Refusal] = []

  /// The value (refused members as `null`) and what was refused, or the syntax error that makes
  /// the text not JSON at all.
  static func parse(_ bytes: UnsafeRawBufferPointer, allowDuplicateKeys: Bool)
    throws(JSONParseError) -> (value: JSON, refusals: [Refusal])
  {
    var parser = JSONRecoveringParser(bytes: bytes, allowDuplicateKeys: allowDuplicateKeys)
    parser.skipWhitespace()
    let value = try parser.parseValue()
    parser.skipWhitespace()
    if parser.offset < bytes.count { throw parser.failure(.syntax, "end of file expected") }
    return (value, parser.refusals)
  }

  private init(bytes: UnsafeRawBufferPointer, allowDuplicateKeys: Bool) {
    self.bytes = bytes
    self.allowDuplicateKeys = allowDuplicateKeys
  }

  // MARK: Values

  /// An array or object whose members are still being read.
  private enum Open {
    case array([JSON])
    /// `key`: the member whose value is being read; `seen`: the keys so far, as bytes.
    case object(JSONObject, key: String, seen: Set<[UInt8]>)
  }

  /// Reads one value, iteratively: an explicit stack of open containers instead of recursion,
  /// so the nesting limit does not depend on the calling thread's stack size.
  private mutating func parseValue() throws(JSONParseError) -> JSON {
    var stack: [Open] = []
    while true {
      var value: JSON
      if stack.count >= JSON.maximumDepth {
        offset += 1
        throw failure(
          .tooDeep,
          "maximum parsing depth reached (values nest at most \(JSON.maximumDepth) levels "
            + "deep, scalars included)")
      }
      guard let byte = peek() else { throw failure(.unexpectedEnd, "unexpected end of input") }
      switch byte {
      case UInt8(ascii: "{"):
        offset += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
          offset += 1
          value = .object(JSONObject())
        } else {
          stack.append(.object(JSONObject(), key: try parseKey(), seen: []))
          continue
        }
      case UInt8(ascii: "["):
        offset += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
          offset += 1
          value = .array([])
        } else {
          stack.append(.array([]))
          path.append("0")
          continue
        }
      case UInt8(ascii: "\""): value = .string(try parseString())
      case UInt8(ascii: "t"): value = try literal("true", .bool(true))
      case UInt8(ascii: "f"): value = try literal("false", .bool(false))
      case UInt8(ascii: "n"): value = try literal("null", .null)
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = try parseNumber()
      default:
        offset += 1
        throw failure(.syntax, "invalid token")
      }
      // A value is complete: hand it to its container, closing every container it completes.
      closing: while true {
        guard let open = stack.popLast() else { return value }
        switch open {
        case .array(var elements):
          elements.append(value)
          path.removeLast()
          skipWhitespace()
          switch next() {
          case UInt8(ascii: ","):
            skipWhitespace()
            path.append(String(elements.count))
            stack.append(.array(elements))
            break closing
          case UInt8(ascii: "]"): value = .array(elements)
          case nil: throw failure(.unexpectedEnd, "']' expected")
          default: throw failure(.syntax, "']' expected")
          }
        case .object(var object, let key, var seen):
          // Keys are the same when their bytes are, as jansson compares them: Swift's `==` on
          // strings would also join "é" and "e\u{301}" (canonical equivalence), which a 1.5
          // million-line fuzz run caught.
          let bytes = Array(key.utf8)
          if seen.insert(bytes).inserted {
            object.appendUnindexed(key, value)
          } else {
            if !allowDuplicateKeys {
              refuse(
                .duplicateKey,
                "duplicate object key \(JSON.string(key).description)\(place); "
                  + "which value was meant is ambiguous")
              value = .null
            }
            // The last value wins at the first position, as jansson does.
            if let position = object.keys.firstIndex(where: { $0.utf8.elementsEqual(bytes) }) {
              object.setValue(value, at: position)
            }
          }
          path.removeLast()
          skipWhitespace()
          switch next() {
          case UInt8(ascii: ","):
            skipWhitespace()
            stack.append(.object(object, key: try parseKey(), seen: seen))
            break closing
          case UInt8(ascii: "}"):
            object.reindex()
            value = .object(object)
          case nil: throw failure(.unexpectedEnd, "'}' expected")
          default: throw failure(.syntax, "'}' expected")
          }
        }
      }
    }
  }

  /// A member's key and its colon; the key goes on the path.
  private mutating func parseKey() throws(JSONParseError) -> String {
    guard peek() == UInt8(ascii: "\"") else { throw expected("string or '}'") }
    let key = try parseString()
    skipWhitespace()
    guard peek() == UInt8(ascii: ":") else { throw expected("':'") }
    offset += 1
    skipWhitespace()
    path.append(key)
    return key
  }

  private mutating func literal(_ word: StaticString, _ value: JSON) throws(JSONParseError) -> JSON
  {
    let text = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
    for expected in text {
      guard let byte = next() else { throw failure(.unexpectedEnd, "unexpected end of input") }
      guard byte == expected else { throw failure(.syntax, "invalid token") }
    }
    return value
  }

  // MARK: Numbers

  private mutating func parseNumber() throws(JSONParseError) -> JSON {
    let start = offset
    var isInteger = true
    if peek() == UInt8(ascii: "-") { offset += 1 }
    guard let first = next(), isDigit(first) else { throw failure(.syntax, "invalid token") }
    if first == UInt8(ascii: "0"), let after = peek(), isDigit(after) {
      offset += 1
      throw failure(.syntax, "invalid token")
    }
    skipDigits()
    if peek() == UInt8(ascii: ".") {
      isInteger = false
      offset += 1
      guard let digit = next(), isDigit(digit) else { throw failure(.syntax, "invalid token") }
      skipDigits()
    }
    if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
      isInteger = false
      offset += 1
      if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { offset += 1 }
      guard let digit = next(), isDigit(digit) else { throw failure(.syntax, "invalid token") }
      skipDigits()
    }
    let text = String(
      decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
    if isInteger {
      if let integer = Int64(text) { return .integer(integer) }
      refuse(
        .numberOutOfRange,
        "the integer \(text)\(place) does not fit in 64 bits "
          + "(from -9223372036854775808 to 9223372036854775807)")
      return .null
    }
    if let double = Double(text), double.isFinite { return .double(double) }
    refuse(
      .numberOutOfRange,
      "the number \(text)\(place) is beyond the range of a double "
        + "(about ±1.8e308)")
    return .null
  }

  private mutating func skipDigits() {
    while let byte = peek(), isDigit(byte) { offset += 1 }
  }

  private func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }

  // MARK: Strings

  private mutating func parseString() throws(JSONParseError) -> String {
    offset += 1  // "
    var utf8: [UInt8] = []
    while true {
      guard let byte = next() else { throw failure(.unexpectedEnd, "premature end of input") }
      switch byte {
      case UInt8(ascii: "\""):
        guard let string = String(validating: utf8, as: UTF8.self) else {
          throw failure(.invalidUTF8, "invalid UTF-8 in a string")
        }
        return string
      case UInt8(ascii: "\\"):
        try parseEscape(into: &utf8)
      case 0..<0x20:
        throw failure(.syntax, "control character 0x\(String(byte, radix: 16)) in a string")
      default:
        utf8.append(byte)
      }
    }
  }

  private mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONParseError) {
    guard let byte = next() else { throw failure(.unexpectedEnd, "premature end of input") }
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(byte)
    case UInt8(ascii: "b"): utf8.append(0x08)
    case UInt8(ascii: "f"): utf8.append(0x0C)
    case UInt8(ascii: "n"): utf8.append(0x0A)
    case UInt8(ascii: "r"): utf8.append(0x0D)
    case UInt8(ascii: "t"): utf8.append(0x09)
    case UInt8(ascii: "u"):
      var scalar = try hexQuad()
      if (0xDC00...0xDFFF).contains(scalar) { throw loneSurrogate(scalar) }
      if (0xD800...0xDBFF).contains(scalar) {
        guard next() == UInt8(ascii: "\\"), next() == UInt8(ascii: "u") else {
          throw loneSurrogate(scalar)
        }
        let low = try hexQuad()
        guard (0xDC00...0xDFFF).contains(low) else { throw loneSurrogate(scalar) }
        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
      }
      guard let unicode = Unicode.Scalar(scalar) else { throw loneSurrogate(scalar) }
      utf8.append(contentsOf: String(Character(unicode)).utf8)
    default:
      throw failure(.syntax, "invalid escape")
    }
  }

  private mutating func hexQuad() throws(JSONParseError) -> UInt32 {
    var value: UInt32 = 0
    for _ in 0..<4 {
      guard let byte = next() else { throw failure(.unexpectedEnd, "premature end of input") }
      let digit: UInt8
      switch byte {
      case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
      case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
      case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
      default: throw failure(.syntax, "invalid escape")
      }
      value = value << 4 | UInt32(digit)
    }
    return value
  }

  private func loneSurrogate(_ scalar: UInt32) -> JSONParseError {
    let hex = String(scalar, radix: 16, uppercase: true)
    return failure(.syntax, "invalid Unicode '\\u\(hex)'")
  }

  // MARK: Reading and reporting

  private func peek() -> UInt8? { offset < bytes.count ? bytes[offset] : nil }

  private mutating func next() -> UInt8? {
    guard offset < bytes.count else { return nil }
    defer { offset += 1 }
    return bytes[offset]
  }

  private mutating func skipWhitespace() {
    while let byte = peek(),
      byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    {
      offset += 1
    }
  }

  private var pointer: JSONPointer { JSONPointer(tokens: path) }

  /// " at /a/b", or nothing for the whole text.
  private var place: String { path.isEmpty ? "" : " at \(pointer.description)" }

  private mutating func refuse(_ kind: JSONParseError.Kind, _ reason: String) {
    refusals.append(
      Refusal(
        member: JSONParseError.Refusal(kind: kind, pointer: pointer, reason: reason),
        position: offset))
  }

  /// The byte at the offset is not `what`: jansson counts it as read.
  private mutating func expected(_ what: String) -> JSONParseError {
    guard offset < bytes.count else { return failure(.unexpectedEnd, "\(what) expected") }
    offset += 1
    return failure(.syntax, "\(what) expected")
  }

  /// An error at the current offset, located as jansson locates its own.
  func failure(_ kind: JSONParseError.Kind, _ reason: String) -> JSONParseError {
    Self.error(kind, reason, position: offset, in: bytes)
  }

  /// `kind` and `reason` at byte `position` (bytes read so far), with jansson's line and column
  /// (lines by `\n`, columns by UTF-8 characters).
  static func error(
    _ kind: JSONParseError.Kind, _ reason: String, position: Int, in bytes: UnsafeRawBufferPointer
  ) -> JSONParseError {
    var line = 1
    var column = 0
    for byte in bytes[..<min(position, bytes.count)] {
      if byte == 0x0A {
        line += 1
        column = 0
      } else if byte & 0xC0 != 0x80 {
        column += 1
      }
    }
    return JSONParseError(
      kind: kind, line: line, column: column, position: position, reason: reason)
  }
}

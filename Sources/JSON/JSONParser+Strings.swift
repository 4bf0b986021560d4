// Strings, the part of a parse where most of a text's bytes are: scanned in place, decoded once.
extension JSONParser {
  /// What a string's scan found: the string's bytes in the input (all ASCII, or some not), or
  /// escapes, whose decoded bytes are then in `scratch`.
  enum ScannedString {
    case ascii(UnsafeRawBufferPointer)
    case utf8(UnsafeRawBufferPointer)
    case escaped
  }

  /// A member's key. A short ASCII key comes from the thread's table of strings met before
  /// (keys repeat in every request and every element of an array of objects).
  mutating func parseString() throws(JSONParseError) -> String {
    let scanned = try scanString()
    if case .ascii(let content) = scanned { return strings.string(content) }
    return try decode(scanned)
  }

  /// A string value. A short ASCII one is the table's boxed value, shared rather than made
  /// again (`JSON.string` is `indirect`).
  mutating func parseStringValue() throws(JSONParseError) -> JSON {
    let scanned = try scanString()
    if case .ascii(let content) = scanned { return strings.value(content) }
    return .string(try decode(scanned))
  }

  private func decode(_ scanned: ScannedString) throws(JSONParseError) -> String {
    switch scanned {
    case .ascii(let content):
      return String(decoding: content, as: UTF8.self)
    case .utf8(let content):
      guard let string = String(validating: content, as: UTF8.self) else {
        throw invalidUTF8(content)
      }
      return string
    case .escaped:
      guard let string = String(validating: scratch, as: UTF8.self) else {
        throw scratch.withUnsafeBytes { invalidUTF8($0) }
      }
      return string
    }
  }

  /// Reads a string from its opening quote to just past its closing one. The common case (no
  /// escapes) is left where it lies in the input, to be decoded once.
  private mutating func scanString() throws(JSONParseError) -> ScannedString {
    offset += 1  // the opening quote
    let contentStart = offset
    var ascii = true
    // Eight bytes at a time while a whole word remains: a word with none of the bytes that
    // end the plain run (a quote, a backslash, a control byte) or mark UTF-8 (0x80 and up) is
    // skipped whole; otherwise the scan stops at the first such byte. (The lowest bytes of a
    // loaded word are the first only on a little-endian machine.)
    words: while Self.isLittleEndian && offset + 8 <= bytes.count {
      let word = UnsafeRawPointer(start + offset).loadUnaligned(as: UInt64.self)
      let special = Self.specialBytes(word)
      if special == 0 {
        offset += 8
        continue
      }
      offset += special.trailingZeroBitCount >> 3
      let byte = start[offset]
      if byte == UInt8(ascii: "\"") {
        let content = UnsafeRawBufferPointer(rebasing: bytes[contentStart..<offset])
        offset += 1
        return ascii ? .ascii(content) : .utf8(content)
      }
      if byte == UInt8(ascii: "\\") || byte < 0x20 { break words }
      ascii = false
      offset += 1
    }
    while offset < bytes.count {
      let byte = start[offset]
      if byte == UInt8(ascii: "\"") {
        let content = UnsafeRawBufferPointer(rebasing: bytes[contentStart..<offset])
        offset += 1
        return ascii ? .ascii(content) : .utf8(content)
      }
      if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
      if byte >= 0x80 { ascii = false }
      offset += 1
    }
    scratch.removeAll(keepingCapacity: true)
    scratch.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[contentStart..<offset]))
    while true {
      guard let byte = next() else { throw failure(.unexpectedEnd, "premature end of input") }
      switch byte {
      case UInt8(ascii: "\""):
        return .escaped
      case UInt8(ascii: "\\"):
        try parseEscape()
      case 0..<0x20:
        throw failure(.syntax, "control character 0x\(String(byte, radix: 16)) in a string")
      default:
        scratch.append(byte)
      }
    }
  }

  private static var isLittleEndian: Bool {
    #if _endian(little)
      true
    #else
      false
    #endif
  }

  /// The high bit of each byte of `word` (little-endian) that is a quote, a backslash, below
  /// 0x20 or 0x80 and up, and perhaps of bytes above such a byte (a borrow runs upwards), so
  /// the lowest bit set is always the first such byte.
  @inline(__always)
  private static func specialBytes(_ word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let high: UInt64 = 0x8080_8080_8080_8080
    let quotes = word ^ (ones &* 0x22)
    let backslashes = word ^ (ones &* 0x5C)
    let zeroQuote = (quotes &- ones) & ~quotes
    let zeroBackslash = (backslashes &- ones) & ~backslashes
    let control = (word &- ones &* 0x20) & ~word
    return (zeroQuote | zeroBackslash | control | word) & high
  }

  private mutating func parseEscape() throws(JSONParseError) {
    guard let byte = next() else { throw failure(.unexpectedEnd, "premature end of input") }
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(byte)
    case UInt8(ascii: "b"): scratch.append(0x08)
    case UInt8(ascii: "f"): scratch.append(0x0C)
    case UInt8(ascii: "n"): scratch.append(0x0A)
    case UInt8(ascii: "r"): scratch.append(0x0D)
    case UInt8(ascii: "t"): scratch.append(0x09)
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
      if let encoded = UTF8.encode(unicode) { scratch.append(contentsOf: encoded) }
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

  /// Names the first byte that does not belong to a UTF-8 sequence.
  private func invalidUTF8(_ content: UnsafeRawBufferPointer) -> JSONParseError {
    var iterator = content.makeIterator()
    var decoder = Unicode.UTF8.ForwardParser()
    var consumed = 0
    while case .valid(let scalar) = decoder.parseScalar(from: &iterator) {
      consumed += scalar.count
    }
    let byte = consumed < content.count ? " (byte 0x\(String(content[consumed], radix: 16)))" : ""
    return failure(.invalidUTF8, "invalid UTF-8 in a string\(byte)")
  }

  private func loneSurrogate(_ scalar: UInt32) -> JSONParseError {
    let hex = String(scalar, radix: 16, uppercase: true)
    return failure(.syntax, "invalid Unicode '\\u\(hex)'")
  }
}

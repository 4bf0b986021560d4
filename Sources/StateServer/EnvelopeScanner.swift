import JSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads the plain tokens of a request's envelope by pointer, each read checked against
/// `count`: JSON whitespace, single bytes, strings of printable ASCII without escapes, and ids.
/// `RequestEnvelope` reads whole plain requests with it; `OversizeHead` the id at the start of
/// a line too long to read.
struct EnvelopeScanner {
  let base: UnsafePointer<UInt8>
  let count: Int
  var at = 0

  init(base: UnsafePointer<UInt8>, count: Int) {
    self.base = base
    self.count = count
  }

  /// Over `bytes`, or `nil` when they have no address (they are empty).
  init?(_ bytes: UnsafeRawBufferPointer) {
    guard let base = bytes.baseAddress else { return nil }
    self.init(base: base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
  }

  /// Skips JSON's whitespace: space, tab, line feed, carriage return.
  mutating func skipSpace() {
    while at < count {
      switch base[at] {
      case 0x20, 0x09, 0x0A, 0x0D: at += 1
      default: return
      }
    }
  }

  mutating func take(_ byte: UInt8) -> Bool {
    guard at < count, base[at] == byte else { return false }
    at += 1
    return true
  }

  /// The bytes between the quotes of a string of ASCII without escapes or control bytes (the
  /// envelope's keys, methods and the usual ids). Byte by byte: the framing's strings are
  /// short, and reading them a word at a time measured no cheaper.
  mutating func plainString() -> UnsafeRawBufferPointer? {
    guard take(.quote) else { return nil }
    let start = at
    while at < count {
      let byte = base[at]
      if byte == .quote {
        at &+= 1
        return UnsafeRawBufferPointer(start: base + start, count: at &- 1 &- start)
      }
      guard byte >= 0x20, byte < 0x80, byte != .backslash else { return nil }
      at &+= 1
    }
    return nil
  }

  /// A plain string, `null`, or an integer of at most 18 digits, so it fits `Int64` without
  /// a check. A longer number, a fraction or an exponent leaves a byte that is not a separator
  /// after the digits read, which the caller's next token refuses.
  mutating func id(_ strings: JSONStringCache) -> JSON? {
    guard at < count else { return nil }
    switch base[at] {
    case .quote:
      return plainString().map(strings.value)
    case UInt8(ascii: "n"):
      guard count - at >= 4, memcmp(base + at, "null", 4) == 0 else { return nil }
      at += 4
      return .null
    default:
      let negative = take(.minus)
      let start = at
      var value: Int64 = 0
      while at < count, at - start < 18 {
        let digit = base[at] &- UInt8(ascii: "0")
        guard digit < 10 else { break }
        value = value &* 10 &+ Int64(digit)
        at += 1
      }
      // No leading zero: JSON has none, and "01" is two tokens to jansson.
      guard at > start, at - start == 1 || base[start] != UInt8(ascii: "0") else { return nil }
      return .integer(negative ? -value : value)
    }
  }

  /// Whether `text` is the bytes of `literal`.
  static func equal(_ text: UnsafeRawBufferPointer, _ literal: StaticString) -> Bool {
    guard let start = text.baseAddress, text.count == literal.utf8CodeUnitCount else {
      return false
    }
    return memcmp(start, literal.utf8Start, text.count) == 0
  }
}

extension UInt8 {
  static let openBrace = UInt8(ascii: "{")
  static let closeBrace = UInt8(ascii: "}")
  static let openBracket = UInt8(ascii: "[")
  static let colon = UInt8(ascii: ":")
  static let comma = UInt8(ascii: ",")
  static let quote = UInt8(ascii: "\"")
  static let backslash = UInt8(ascii: "\\")
  static let minus = UInt8(ascii: "-")
}

/// Writes compact JSON text straight into a byte buffer.
///
/// Measured faster than building a jansson tree and calling `json_dumpb` (see
/// `bench/json/run.sh`), and it writes doubles in their shortest round-trip form (`19.99`, where
/// jansson's `%.17g` gives `19.989999999999998`).
struct JSONWriter {
  var bytes: [UInt8]
  /// `description` writes non-finite doubles as `nan`/`inf` instead of failing: it is for people.
  let lenient: Bool

  /// `depth` is the value's nesting level minus one: the root is at 0.
  mutating func write(_ value: JSON, depth: Int) throws(JSONWriteError) {
    guard depth < JSON.maximumDepth else { throw Self.tooDeep }
    switch value {
    case .null: append("null")
    case .bool(let flag): flag ? append("true") : append("false")
    case .integer(let integer): write(integer)
    case .double(let double): try write(double)
    case .string(let string): write(string)
    case .array(let elements):
      bytes.append(UInt8(ascii: "["))
      for (position, element) in elements.enumerated() {
        if position > 0 { bytes.append(UInt8(ascii: ",")) }
        do throws(JSONWriteError) {
          try write(element, depth: depth + 1)
        } catch {
          throw error.inside("\(position)")
        }
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let object):
      bytes.append(UInt8(ascii: "{"))
      let keys = object.keys
      let values = object.values
      for position in keys.indices {
        if position > 0 { bytes.append(UInt8(ascii: ",")) }
        write(keys[position])
        bytes.append(UInt8(ascii: ":"))
        do throws(JSONWriteError) {
          try write(values[position], depth: depth + 1)
        } catch {
          throw error.inside(keys[position])
        }
      }
      bytes.append(UInt8(ascii: "}"))
    }
  }

  private static let tooDeep = JSONWriteError(
    kind: .tooDeep, pointer: "",
    reason: "values nest deeper than \(JSON.maximumDepth) levels; the text would not parse")

  private mutating func append(_ literal: StaticString) {
    bytes.append(
      contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
  }

  private mutating func write(_ integer: Int64) {
    if integer < 0 { bytes.append(UInt8(ascii: "-")) }
    var magnitude = integer.magnitude
    if magnitude < 10 {
      bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude))
      return
    }
    // Digits come out last first: fill a 24-byte scratch from its end (UInt64 has 20 digits).
    var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)
    withUnsafeMutableBytes(of: &scratch) { raw in
      var start = raw.count
      while magnitude > 0 {
        start -= 1
        let (quotient, digit) = magnitude.quotientAndRemainder(dividingBy: 10)
        raw[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: digit)
        magnitude = quotient
      }
      let digits = UnsafeRawBufferPointer(rebasing: raw[start...])
      bytes.append(contentsOf: digits.assumingMemoryBound(to: UInt8.self))
    }
  }

  private mutating func write(_ double: Double) throws(JSONWriteError) {
    guard double.isFinite else {
      if lenient {
        bytes.append(contentsOf: double.description.utf8)
        return
      }
      throw JSONWriteError(
        kind: .nonFiniteDouble, pointer: "",
        reason: "\(double) is not a JSON number (only finite doubles can be written)")
    }
    // Swift's description is the shortest text that reads back as the same double, and its
    // forms ("19.99", "1e-05", "1.0", "-0.0", "5e-324") are all valid JSON numbers. It fits a
    // small string (no allocation) up to 15 characters.
    bytes.append(contentsOf: double.description.utf8)
  }

  private mutating func write(_ string: String) {
    var string = string
    string.withUTF8 { utf8 in write(utf8: utf8) }
  }

  /// Escapes only what RFC 8259 requires (`"`, `\` and controls below 0x20); everything else,
  /// non-ASCII included, is copied as it is, in runs.
  private mutating func write(utf8: UnsafeBufferPointer<UInt8>) {
    bytes.append(UInt8(ascii: "\""))
    var runStart = 0
    for position in utf8.indices {
      let byte = utf8[position]
      guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
        continue
      }
      if runStart < position {
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
      }
      runStart = position + 1
      bytes.append(UInt8(ascii: "\\"))
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
      case 0x0A: bytes.append(UInt8(ascii: "n"))
      case 0x0D: bytes.append(UInt8(ascii: "r"))
      case 0x09: bytes.append(UInt8(ascii: "t"))
      case 0x08: bytes.append(UInt8(ascii: "b"))
      case 0x0C: bytes.append(UInt8(ascii: "f"))
      default:
        let hex: StaticString = "0123456789abcdef"
        bytes.append(contentsOf: [
          UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
          hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 0xF)],
        ])
      }
    }
    if runStart < utf8.count {
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }
    bytes.append(UInt8(ascii: "\""))
  }
}

extension JSONWriteError {
  /// The same error seen from the parent: `token` (an index or a key) is prepended to the
  /// pointer, escaped as RFC 6901 requires.
  fileprivate func inside(_ token: String) -> JSONWriteError {
    var escaped = ""
    for character in token.unicodeScalars {
      switch character {
      case "~": escaped += "~0"
      case "/": escaped += "~1"
      default: escaped.unicodeScalars.append(character)
      }
    }
    return JSONWriteError(kind: kind, pointer: "/" + escaped + pointer, reason: reason)
  }
}

extension JSON: CustomStringConvertible {
  /// Writes compact JSON text and returns its UTF-8 bytes: the form every outgoing message
  /// takes.
  ///
  /// ```swift
  /// let value: JSON = ["price": 19.99, "name": "Zoë"]
  /// try value.serialized()  // the bytes of {"price":19.99,"name":"Zoë"}
  /// ```
  public func serialized() throws(JSONWriteError) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(128)
    try write(to: &bytes)
    return bytes
  }

  /// Appends compact JSON text to `buffer` (the server's output buffer). On failure `buffer` is
  /// left as it was, never with half a value.
  public func write(to buffer: inout [UInt8]) throws(JSONWriteError) {
    let start = buffer.count
    var writer = JSONWriter(bytes: buffer, lenient: false)
    buffer = []  // so `writer.bytes` is uniquely owned and appends do not copy
    do throws(JSONWriteError) {
      try writer.write(self, depth: 0)
    } catch {
      writer.bytes.removeSubrange(start...)
      buffer = writer.bytes
      throw error
    }
    buffer = writer.bytes
  }

  /// The compact JSON text; a non-finite double shows as `nan` or `inf` (so this is for
  /// people, never for the wire: use ``serialized()``).
  public var description: String {
    var writer = JSONWriter(bytes: [], lenient: true)
    do {
      try writer.write(self, depth: 0)
    } catch {
      return "<JSON nested deeper than \(JSON.maximumDepth)>"
    }
    return String(decoding: writer.bytes, as: UTF8.self)
  }
}

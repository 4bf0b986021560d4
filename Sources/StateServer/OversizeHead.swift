import JSON

/// The id of a request whose line is too long to read, found in the line's first bytes, so that
/// its refusal is answered to the request that sent it (a client waiting on that id hears at
/// once, where an answer with a `null` id leaves it waiting for ever).
///
/// Clients write the envelope first (`{"jsonrpc":"2.0","id":7,"method":"store/open","params":…`),
/// so the id is read from the members before the first value that is not a plain scalar; a
/// head that reaches anything else first (the params, an escape, the end of the bytes read)
/// gives no id, and the refusal keeps JSON-RPC's `null`.
enum OversizeHead {
  /// How much of a line's start is looked at: far more than any envelope's members take.
  static let length = 4096

  /// The top-level `id` among the first plain members of `head`, or `nil`.
  static func id(in head: UnsafeRawBufferPointer) -> JSON? {
    var reader = Reader(bytes: head)
    reader.skipSpace()
    guard reader.take(UInt8(ascii: "{")) else { return nil }
    while true {
      reader.skipSpace()
      guard let key = reader.plainString() else { return nil }
      reader.skipSpace()
      guard reader.take(UInt8(ascii: ":")) else { return nil }
      reader.skipSpace()
      guard let value = reader.scalar() else { return nil }
      if key == "id" {
        switch value {
        case .string, .integer, .null: return value
        default: return nil
        }
      }
      reader.skipSpace()
      guard reader.take(UInt8(ascii: ",")) else { return nil }
    }
  }

  private struct Reader {
    let bytes: UnsafeRawBufferPointer
    var at = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    mutating func skipSpace() {
      while at < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[at]) { at += 1 }
    }

    mutating func take(_ byte: UInt8) -> Bool {
      guard at < bytes.count, bytes[at] == byte else { return false }
      at += 1
      return true
    }

    /// A string of printable ASCII without escapes, or `nil` (the envelope's keys, methods and
    /// the usual ids are such strings).
    mutating func plainString() -> String? {
      guard take(UInt8(ascii: "\"")) else { return nil }
      let start = at
      while at < bytes.count {
        let byte = bytes[at]
        if byte == UInt8(ascii: "\"") {
          at += 1
          return String(
            decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<at - 1]), as: UTF8.self)
        }
        guard byte >= 0x20, byte < 0x80, byte != UInt8(ascii: "\\") else { return nil }
        at += 1
      }
      return nil
    }

    /// A plain string, `null`, `true`, `false` or an integer of at most 18 digits, followed by
    /// a separator; `nil` for any other value.
    mutating func scalar() -> JSON? {
      guard at < bytes.count else { return nil }
      switch bytes[at] {
      case UInt8(ascii: "\""): return plainString().map(JSON.string)
      case UInt8(ascii: "n"): return literal("null", .null)
      case UInt8(ascii: "t"): return literal("true", .bool(true))
      case UInt8(ascii: "f"): return literal("false", .bool(false))
      default: return integer()
      }
    }

    private mutating func literal(_ text: String, _ value: JSON) -> JSON? {
      let end = at + text.utf8.count
      guard end < bytes.count, bytes[at..<end].elementsEqual(text.utf8) else { return nil }
      at = end
      return value
    }

    private mutating func integer() -> JSON? {
      let negative = take(UInt8(ascii: "-"))
      let start = at
      var value: Int64 = 0
      while at < bytes.count, at - start < 18 {
        let digit = bytes[at] &- UInt8(ascii: "0")
        guard digit < 10 else { break }
        value = value * 10 + Int64(digit)
        at += 1
      }
      // Followed by a separator, not by a fraction, an exponent or a 19th digit.
      guard at > start, at < bytes.count, at - start == 1 || bytes[start] != UInt8(ascii: "0"),
        [0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ","), UInt8(ascii: "}")].contains(bytes[at])
      else { return nil }
      return .integer(negative ? -value : value)
    }
  }
}

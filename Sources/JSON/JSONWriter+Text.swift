/// The text of the two scalars every message is made of: strings (quoted, escaped) and
/// unsigned integers (versions, ids, counts). Both are written straight into the reserved room
/// of the buffer, several bytes per step, with no call per byte: most of what the writer thread
/// writes is these (a `state/patch` line holds six strings and four integers), and checking and
/// copying them one byte at a time was its largest cost.
extension JSONWriter {
  /// Writes `value` as a JSON number.
  public mutating func write(integer value: Int64) {
    if value < 0 { append(UInt8(ascii: "-")) }
    write(unsigned: value.magnitude)
  }

  /// Writes `value` when it is an integer (the usual request id or cause) without the generic
  /// walk of a value; returns false, writing nothing, for any other value.
  public mutating func writeIfInteger(_ value: JSON) -> Bool {
    guard case .integer(let integer) = value else { return false }
    write(integer: integer)
    return true
  }

  /// Writes the decimal digits of `value`.
  public mutating func write(unsigned value: UInt64) {
    reserve(20)  // "18446744073709551615"
    if value < 10 {
      put(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
      return
    }
    // Counted by comparison, not division; below a million (most versions, ids and counts)
    // by three comparisons at most.
    var digits: Int
    if value < 1000 {
      digits = value < 100 ? 2 : 3
    } else if value < 1_000_000 {
      digits = value < 10_000 ? 4 : value < 100_000 ? 5 : 6
    } else {
      digits = 7
      var bound: UInt64 = 10_000_000
      while digits < 20 && value >= bound {
        digits &+= 1
        bound = bound &* 10
      }
    }
    // Digits come out last first, two at a time from a table of the hundred pairs: fill the
    // reserved room from its end.
    let pairs: StaticString = """
      0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243\
      4445464748495051525354555657585960616263646566676869707172737475767778798081828384858687\
      888990919293949596979899
      """
    let table = UnsafeRawPointer(pairs.utf8Start)
    let room = UnsafeMutableRawPointer(start + count)
    var position = digits
    var rest = value
    while rest >= 100 {
      let quotient = rest / 100
      let pair = Int(truncatingIfNeeded: rest &- quotient &* 100)
      position &-= 2
      room.storeBytes(
        of: table.loadUnaligned(fromByteOffset: pair &* 2, as: UInt16.self),
        toByteOffset: position, as: UInt16.self)
      rest = quotient
    }
    if rest >= 10 {
      room.storeBytes(
        of: table.loadUnaligned(
          fromByteOffset: Int(truncatingIfNeeded: rest) &* 2, as: UInt16.self),
        as: UInt16.self)
    } else {
      room.storeBytes(of: UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest), as: UInt8.self)
    }
    count &+= digits
  }

  /// Writes `utf8` as a JSON string: quoted, escaping only what RFC 8259 requires (`"`, `\` and
  /// controls below 0x20); everything else, non-ASCII included, is copied as it is.
  mutating func write(utf8: UnsafeBufferPointer<UInt8>) {
    // Room for the unescaped case; each escape reserves its own extra bytes.
    reserve(utf8.count &+ 2)
    put(UInt8(ascii: "\""))
    if let source = utf8.baseAddress {
      let clean = Self.copyUnescaped(source, count: utf8.count, to: start + count)
      count &+= clean
      if clean < utf8.count { writeEscaping(UnsafeBufferPointer(rebasing: utf8[clean...])) }
    }
    put(UInt8(ascii: "\""))
  }

  /// Copies the longest prefix of `source` that needs no escape to `target`, and returns its
  /// length. Eight bytes are checked and copied at a time (the last eight overlapping the ones
  /// before), a short string in two overlapping halves; `target` must have room for `count`
  /// bytes (bytes past the returned length may be overwritten too).
  @inline(__always)
  static func copyUnescaped(
    _ source: UnsafePointer<UInt8>, count: Int, to target: UnsafeMutablePointer<UInt8>
  ) -> Int {
    let from = UnsafeRawPointer(source)
    let to = UnsafeMutableRawPointer(target)
    var done = 0
    if count >= 8 {
      while done &+ 8 <= count {
        let word = from.loadUnaligned(fromByteOffset: done, as: UInt64.self)
        guard isPlain(word) else { break }
        to.storeBytes(of: word, toByteOffset: done, as: UInt64.self)
        done &+= 8
      }
      if done < count && done &+ 8 > count {
        let word = from.loadUnaligned(fromByteOffset: count &- 8, as: UInt64.self)
        if isPlain(word) {
          to.storeBytes(of: word, toByteOffset: count &- 8, as: UInt64.self)
          return count
        }
      }
    } else if count >= 4 {
      let head = from.loadUnaligned(as: UInt32.self)
      let tail = from.loadUnaligned(fromByteOffset: count &- 4, as: UInt32.self)
      if isPlain(UInt64(head) | UInt64(tail) &<< 32) {
        to.storeBytes(of: head, as: UInt32.self)
        to.storeBytes(of: tail, toByteOffset: count &- 4, as: UInt32.self)
        return count
      }
    }
    while done < count {
      let byte = source[done]
      guard byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") else {
        break
      }
      target[done] = byte
      done &+= 1
    }
    return done
  }

  /// Whether none of the eight bytes of `word` must be escaped: no byte below 0x20, none equal
  /// to `"` or `\` (the bit tricks that find a zero byte, or one below a bound, in a word; a
  /// byte of 0x80 or more never matches, so UTF-8 passes).
  @inline(__always)
  static func isPlain(_ word: UInt64) -> Bool {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let quote = word ^ (ones &* UInt64(UInt8(ascii: "\"")))
    let backslash = word ^ (ones &* UInt64(UInt8(ascii: "\\")))
    let below = (word &- ones &* 0x20) & ~word
    let quotes = (quote &- ones) & ~quote
    let backslashes = (backslash &- ones) & ~backslash
    return (below | quotes | backslashes) & (ones &* 0x80) == 0
  }

  /// The rest of a string from its first byte that needs an escape, without the closing quote;
  /// runs between escapes are copied whole. Not inlined: most strings never get here.
  @inline(never)
  private mutating func writeEscaping(_ utf8: UnsafeBufferPointer<UInt8>) {
    var runStart = 0
    for position in utf8.indices {
      let byte = utf8[position]
      guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
        continue
      }
      put(UnsafeBufferPointer(rebasing: utf8[runStart..<position]))
      runStart = position &+ 1
      // The escape, the rest and the closing quote.
      reserve(6 &+ utf8.count &- position)
      put(UInt8(ascii: "\\"))
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"): put(byte)
      case 0x0A: put(UInt8(ascii: "n"))
      case 0x0D: put(UInt8(ascii: "r"))
      case 0x09: put(UInt8(ascii: "t"))
      case 0x08: put(UInt8(ascii: "b"))
      case 0x0C: put(UInt8(ascii: "f"))
      default:
        let hex: StaticString = "0123456789abcdef"
        put(UInt8(ascii: "u"))
        put(UInt8(ascii: "0"))
        put(UInt8(ascii: "0"))
        put(hex.utf8Start[Int(byte >> 4)])
        put(hex.utf8Start[Int(byte & 0xF)])
      }
    }
    put(UnsafeBufferPointer(rebasing: utf8[runStart...]))
  }
}

/// The bracket scan as it was written before CArrayScan, one byte at a time: the reference that
/// `JSONArrayScan` (every level of it) is compared with in `ArrayScanTests`. Kept as it was, so
/// that the comparison is with the behaviour the deferral was built on.
struct ReferenceArrayScan {
  /// The offset of the array's closing `]`.
  var close: Int
  /// How many elements it holds, when it is JSON: one more than its commas, or none.
  var count: Int
  /// Where the element nearest the middle of the array's text starts (after its comma and the
  /// white space before it), and its index; nil for an array of fewer than two elements.
  var split: (offset: Int, index: Int)?

  /// The array whose `[` is at `open` in `bytes`, its split chosen among the elements that
  /// start after each `step` bytes; nil when its brackets do not close.
  static func scan(_ bytes: UnsafeRawBufferPointer, arrayAt open: Int, step: Int)
    -> ReferenceArrayScan?
  {
    guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
    let count = bytes.count
    // Element starts after the first comma past each step, and how many commas came before:
    // the split is chosen once the end is known, from these few marks.
    let step = Swift.max(1, step)
    var marks: [(offset: Int, index: Int)] = []
    var nextMark = open + step
    var commas = 0
    var depth = 1
    var at = open + 1
    while at < count {
      let byte = base[at]
      switch byte {
      case UInt8(ascii: "\""):
        at += 1
        // The string's end: the next quote not escaped.
        while at < count {
          let inner = base[at]
          if inner == UInt8(ascii: "\"") { break }
          at += inner == UInt8(ascii: "\\") ? 2 : 1
        }
      case UInt8(ascii: "["), UInt8(ascii: "{"):
        depth += 1
      case UInt8(ascii: "]"), UInt8(ascii: "}"):
        depth -= 1
        if depth == 0 {
          // The elements' parse checks every bracket inside them, not this one.
          guard byte == UInt8(ascii: "]") else { return nil }
          var first = open + 1
          while first < at, isWhitespace(base[first]) { first += 1 }
          return ReferenceArrayScan(
            close: at, count: first == at ? 0 : commas + 1,
            split: middle(of: marks, open: open, close: at))
        }
      case UInt8(ascii: ","):
        guard depth == 1 else { break }
        commas += 1
        if at >= nextMark {
          var start = at + 1
          while start < count, isWhitespace(base[start]) { start += 1 }
          marks.append((start, commas))
          nextMark = at + step
        }
      default:
        break
      }
      at += 1
    }
    return nil
  }

  private static func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
  }

  /// The mark nearest the middle of `open...close`.
  private static func middle(of marks: [(offset: Int, index: Int)], open: Int, close: Int)
    -> (offset: Int, index: Int)?
  {
    let middle = open + (close - open) / 2
    return marks.min { abs($0.offset - middle) < abs($1.offset - middle) }
  }
}

internal import CArrayScan

/// Where an array's text ends, and a place near its middle where an element starts: read from
/// the bracket structure alone (strings skipped, escapes honoured), without checking that the
/// text is JSON or making any value. The parse that follows checks every byte.
///
/// The bytes are read by CArrayScan 64 at a time with the processor's vector instructions: the
/// scan runs on one thread before the elements' two-thread parse, so its time is added whole to
/// an open's.
struct JSONArrayScan {
  /// The offset of the array's closing `]`.
  var close: Int
  /// How many elements it holds, when it is JSON: one more than its commas, or none.
  var count: Int
  /// Where the element nearest the middle of the array's text starts (after its comma and the
  /// white space before it), and its index; nil for an array of fewer than two elements.
  var split: (offset: Int, index: Int)?

  /// The array whose `[` is at `open` in `bytes`, its split chosen among the elements that
  /// start after each `step` bytes; nil when its brackets do not close, or when the bracket
  /// that closes it is `}`.
  static func scan(_ bytes: UnsafeRawBufferPointer, arrayAt open: Int, step: Int)
    -> JSONArrayScan?
  {
    scan(bytes, arrayAt: open, step: step, level: 0)
  }

  /// The highest of CArrayScan's levels this processor runs: 1 reads a byte at a time, 2 with
  /// SSE2, 3 with AVX2. Every level gives the same answer; the tests compare them.
  static var bestLevel: Int { Int(carrayscan_best_level()) }

  /// ``scan(_:arrayAt:step:)`` read at `level` (0 for the best this processor runs).
  static func scan(_ bytes: UnsafeRawBufferPointer, arrayAt open: Int, step: Int, level: Int)
    -> JSONArrayScan?
  {
    guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), open >= 0,
      let level = Int32(exactly: level)
    else { return nil }
    // Element starts after the first comma past each step, and how many commas came before:
    // the split is chosen once the end is known, from these few marks. Two marks are at least
    // a step apart, the first a step past the `[`.
    let step = Swift.max(1, step)
    let capacity = open < bytes.count ? (bytes.count - open) / step + 1 : 0
    return withUnsafeTemporaryAllocation(of: carrayscan_mark.self, capacity: capacity) {
      marks -> JSONArrayScan? in
      var markCount = 0
      var commas = 0
      let close = carrayscan_scan(
        base, bytes.count, open, step, marks.baseAddress, capacity, &markCount, &commas, level)
      guard close >= 0 else { return nil }
      var first = open + 1
      while first < close, isWhitespace(base[first]) { first += 1 }
      return JSONArrayScan(
        close: close, count: first == close ? 0 : commas + 1,
        split: middle(
          of: UnsafeBufferPointer(rebasing: marks[..<markCount]), open: open, close: close))
    }
  }

  private static func isWhitespace(_ byte: UInt8) -> Bool {
    byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
  }

  /// The mark nearest the middle of `open...close`.
  private static func middle(of marks: UnsafeBufferPointer<carrayscan_mark>, open: Int, close: Int)
    -> (offset: Int, index: Int)?
  {
    let middle = open + (close - open) / 2
    return marks.min { abs($0.offset - middle) < abs($1.offset - middle) }.map {
      ($0.offset, $0.index)
    }
  }
}

// Equality without a walk: two arrays (or objects) that share their storage buffer are equal.
//
// A store publishes a new state that is mostly the old one: untouched collections are the very
// same buffers (copy-on-write only copies what is written). Comparing buffer addresses decides
// those subtrees in constant time, which is what makes diffing a large, barely changed state
// cost in proportion to the change.

extension JSON {
  /// Whether `a` and `b` are the same buffer (so necessarily equal). `false` says nothing.
  static func sharesStorage(_ a: [JSON], _ b: [JSON]) -> Bool {
    guard a.count == b.count else { return false }
    if a.isEmpty { return true }
    // `withUnsafeBufferPointer` on a native array only reads its buffer address.
    return a.withUnsafeBufferPointer { lhs in
      b.withUnsafeBufferPointer { rhs in lhs.baseAddress == rhs.baseAddress }
    }
  }

  /// Whether both objects are the same members buffer, or both empty (so necessarily equal).
  static func sharesStorage(_ a: JSONObject, _ b: JSONObject) -> Bool {
    a.sharesStorage(with: b) || (a.isEmpty && b.isEmpty)
  }

  /// Structural equality (`==`, so `1` and `1.0` differ) with the shared-storage shortcut
  /// tried first at the top, where it pays most.
  static func same(_ a: JSON, _ b: JSON) -> Bool {
    switch (a, b) {
    case (.array(let x), .array(let y)):
      return sharesStorage(x, y) || x == y
    case (.object(let x), .object(let y)):
      return sharesStorage(x, y) || x == y
    default:
      return a == b
    }
  }
}

extension JSON {
  /// How many elements `a` and `b` have in common at their start (`fromEnd` false) or at
  /// their end (`fromEnd` true), after the first `skipped` positions, at most `limit`.
  ///
  /// Each pair is first compared as raw memory: two enum values with the same bits hold the
  /// same scalar or reference the same buffers, so they are equal. That costs a few word loads
  /// per element instead of a switch with reference counting, which is what keeps trimming a
  /// 100,000-element array whose elements are shared with the old state well under a
  /// millisecond. Pairs whose bits differ (separately built, or unused payload bytes that
  /// differ) fall back to ``same(_:_:)``.
  static func commonRun(
    _ a: [JSON], _ b: [JSON], skipping skipped: Int = 0, limit: Int, fromEnd: Bool
  ) -> Int {
    let stride = MemoryLayout<JSON>.stride
    let masks = wordMasks
    return a.withUnsafeBytes { rawA in
      b.withUnsafeBytes { rawB in
        guard let baseA = rawA.baseAddress, let baseB = rawB.baseAddress else { return 0 }
        // Walk with a signed step so the loop body has no branch on the direction.
        let step = fromEnd ? -stride : stride
        let firstA = fromEnd ? a.count - 1 - skipped : skipped
        let firstB = fromEnd ? b.count - 1 - skipped : skipped
        var x = baseA + firstA * stride
        var y = baseB + firstB * stride
        var run = 0
        while run < limit {
          if !bitwiseEqual(x, y, masks: masks) {
            let indexA = fromEnd ? firstA - run : firstA + run
            let indexB = fromEnd ? firstB - run : firstB + run
            guard same(a[indexA], b[indexB]) else { break }
          }
          run += 1
          x += step
          y += step
        }
        return run
      }
    }
  }

  /// Per 8-byte word of a `JSON` value's stride, the bits that belong to the value (trailing
  /// padding, which copies need not preserve, is masked out). Empty when the layout is not
  /// made of whole words, and then ``bitwiseEqual(_:_:)`` compares bytes.
  private static let wordMasks: [UInt64] = {
    let size = MemoryLayout<JSON>.size
    let stride = MemoryLayout<JSON>.stride
    guard stride % 8 == 0 else { return [] }
    return (0..<(stride / 8)).map { word in
      let bytes = max(0, min(8, size - word * 8))
      return bytes == 8 ? ~0 : (UInt64(1) << (UInt64(bytes) * 8)) &- 1
    }
  }()

  /// Whether the `JSON` values stored at `x` and `y` have identical bits (padding aside).
  /// `masks` is ``wordMasks``, read once by the caller rather than once per element.
  @inline(__always)
  private static func bitwiseEqual(
    _ x: UnsafeRawPointer, _ y: UnsafeRawPointer, masks: [UInt64]
  ) -> Bool {
    if masks.count == 3 {
      // The layout on 64-bit platforms (a string's two words and a tag byte in a 24-byte
      // stride): branch-free.
      let d0 = x.loadUnaligned(as: UInt64.self) ^ y.loadUnaligned(as: UInt64.self)
      let d1 =
        x.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        ^ y.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
      let d2 =
        x.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
        ^ y.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
      return masks.withUnsafeBufferPointer { m in (d0 & m[0]) | (d1 & m[1]) | (d2 & m[2]) == 0 }
    }
    if masks.count == 2 {
      // A layout of 9 bytes in a 16-byte stride: branch-free.
      let d0 = x.loadUnaligned(as: UInt64.self) ^ y.loadUnaligned(as: UInt64.self)
      let d1 =
        x.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        ^ y.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
      return masks.withUnsafeBufferPointer { m in (d0 & m[0]) | (d1 & m[1]) == 0 }
    }
    for offset in 0..<MemoryLayout<JSON>.size
    where x.load(fromByteOffset: offset, as: UInt8.self)
      != y.load(fromByteOffset: offset, as: UInt8.self)
    {
      return false
    }
    return true
  }
}

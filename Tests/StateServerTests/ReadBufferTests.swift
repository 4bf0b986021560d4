import Testing

@testable import StateServer

/// The read buffer keeps every byte written while it grows: as an allocation, from an
/// allocation into a mapping of its own (``ReadBuffer/mappedBytes``), and as a mapping moved by
/// `mremap`.
@Suite struct ReadBufferTests {
  @Test func growingKeepsTheBytesAcrossEveryKindOfGrowth() {
    var buffer = ReadBuffer(count: 64 << 10)
    var written = 0
    // Each stretch gets a pattern of its own before the buffer doubles past it.
    func fill(_ buffer: borrowing ReadBuffer, from: Int) {
      buffer.withUnsafeMutableBytes { raw in
        for position in stride(from: 0, to: raw.count, by: 4093) where position >= from {
          raw[position] = UInt8(truncatingIfNeeded: position &* 31 &+ 7)
        }
      }
    }
    fill(buffer, from: 0)
    written = buffer.count
    while buffer.count < 4 * ReadBuffer.mappedBytes {
      buffer.grow(to: buffer.count * 2)
      fill(buffer, from: written)
      written = buffer.count
    }
    #expect(buffer.count == 4 * ReadBuffer.mappedBytes)
    let intact = buffer.withUnsafeBytes { raw in
      stride(from: 0, to: raw.count, by: 4093).allSatisfy { position in
        raw[position] == UInt8(truncatingIfNeeded: position &* 31 &+ 7)
      }
    }
    #expect(intact)
  }

  @Test func aSmallerSizeChangesNothing() {
    var buffer = ReadBuffer(count: 64 << 10)
    buffer.grow(to: 1024)
    #expect(buffer.count == 64 << 10)
  }
}

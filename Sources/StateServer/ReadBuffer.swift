#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The bytes ``LineFramer`` reads into: raw memory that grows with `realloc`, which for a large
/// buffer moves its pages rather than copying them, and leaves the new room unwritten. A
/// `[UInt8]` grown by appending zeros copied the bytes read so far and wrote every new byte at
/// each doubling, which for one very long line (the open of a large state) was a visible part
/// of the whole open. Only bytes that a read has written are ever looked at.
struct ReadBuffer: ~Copyable {
  private var base: UnsafeMutableRawPointer
  /// How many bytes it holds.
  private(set) var count: Int

  init(count: Int) {
    guard let base = malloc(count) else { fatalError("out of memory for a read buffer") }
    self.base = base
    self.count = count
  }

  deinit { free(base) }

  /// Grows to `newCount` bytes, keeping the ones before.
  mutating func grow(to newCount: Int) {
    guard newCount > count else { return }
    guard let grown = realloc(base, newCount) else {
      fatalError("out of memory for a line of \(newCount) bytes")
    }
    base = grown
    count = newCount
  }

  /// Runs `body` on the bytes; the pointer is only valid inside `body`.
  func withUnsafeBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows
    -> Result
  {
    try body(UnsafeRawBufferPointer(start: base, count: count))
  }

  /// Runs `body` on the bytes, for writing; the pointer is only valid inside `body`.
  func withUnsafeMutableBytes<Result>(
    _ body: (UnsafeMutableRawBufferPointer) throws -> Result
  ) rethrows -> Result {
    try body(UnsafeMutableRawBufferPointer(start: base, count: count))
  }
}

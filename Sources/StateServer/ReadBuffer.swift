import CPosix

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The bytes ``LineFramer`` reads into: raw memory that grows without copying what was read
/// and leaves the new room unwritten. A `[UInt8]` grown by appending zeros copied the bytes read
/// so far and wrote every new byte at each doubling, which for one very long line (the open of
/// a large state) was a visible part of the whole open. Only bytes that a read has written are
/// ever looked at.
///
/// A small buffer is an allocation. Past ``mappedBytes`` it is memory mapped for it alone and
/// grown with `mremap` (the pages move, nothing is copied). It asks for no huge pages: where
/// free memory goes back to the host (a virtual machine's free page reporting), each huge
/// page's first touch cost more than its 512 small pages did (docs/architecture.md, "The open
/// at scale", step 42).
struct ReadBuffer: ~Copyable {
  private var base: UnsafeMutableRawPointer
  /// How many bytes it holds.
  private(set) var count: Int
  /// Whether `base` is mapped (`mmap`) rather than allocated.
  private var isMapped = false

  /// From this size on the buffer is mapped.
  static let mappedBytes = 4 << 20

  init(count: Int) {
    guard let base = malloc(count) else { fatalError("out of memory for a read buffer") }
    self.base = base
    self.count = count
  }

  deinit {
    if isMapped {
      munmap(base, count)
    } else {
      free(base)
    }
  }

  /// Grows to `newCount` bytes, keeping the ones before.
  mutating func grow(to newCount: Int) {
    guard newCount > count else { return }
    if newCount < Self.mappedBytes {
      guard let grown = realloc(base, newCount) else { Self.outOfMemory(newCount) }
      base = grown
    } else if isMapped {
      base =
        cposix_grow_mapping(base, count, newCount)
        ?? Self.mapCopy(of: base, count, newCount, unmapping: true)
    } else {
      let mapped = Self.mapCopy(of: base, count, newCount, unmapping: false)
      free(base)
      base = mapped
      isMapped = true
    }
    count = newCount
  }

  /// A new mapping of `newCount` bytes holding the `count` at `old`.
  private static func mapCopy(
    of old: UnsafeMutableRawPointer, _ count: Int, _ newCount: Int, unmapping: Bool
  ) -> UnsafeMutableRawPointer {
    guard
      let mapped = mmap(nil, newCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
      mapped != MAP_FAILED
    else { outOfMemory(newCount) }
    mapped.copyMemory(from: old, byteCount: count)
    if unmapping { munmap(old, count) }
    return mapped
  }

  private static func outOfMemory(_ count: Int) -> Never {
    fatalError("out of memory for a line of \(count) bytes")
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

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
/// A small buffer is an allocation. Past ``mappedBytes`` it is memory mapped for it alone,
/// grown with `mremap` (the pages move, nothing is copied), and marked for transparent huge
/// pages (`MADV_HUGEPAGE`, which is what the system's `madvise` mode waits for): the read of a
/// long line then faults its buffer in 2 MB at a time rather than 4 KB, most of the kernel's
/// time spent reading a very long line.
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
      Self.adviseHugePages(base, newCount)
    } else {
      let mapped = Self.mapCopy(of: base, count, newCount, unmapping: false)
      free(base)
      base = mapped
      isMapped = true
      Self.adviseHugePages(base, newCount)
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

  /// Asks for huge pages; a system without them (or with them off) ignores it.
  private static func adviseHugePages(_ base: UnsafeMutableRawPointer, _ count: Int) {
    #if canImport(Glibc)
      _ = madvise(base, count, MADV_HUGEPAGE)
    #endif
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

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

// Giving a large text's bytes back as they are parsed. The server reads a `store/open` of a
// large state as one line in its read buffer and parses it there; the parsed tree grows while
// the whole text stays resident, so the open's peak was the text plus its tree. Nothing reads
// the bytes behind a completed value again (the parser never looks back, the strings it kept
// are copies), except the count of lines and columns an error reports: that is counted over
// each stretch just before the stretch is given back.
extension JSONParser {
  /// How many bytes are parsed between two give-backs: a system call and a count of the
  /// stretch's lines and columns each.
  static var discardStep: Int { 1 << 20 }

  private static let pageSize: Int = {
    let size = Int(sysconf(Int32(_SC_PAGESIZE)))
    return size > 0 ? size : 4096
  }()

  /// Gives back the whole pages between `kept` and the offset (no further than the
  /// `discardLimit`), after counting their lines and columns. Called between values only.
  mutating func discardParsed() {
    guard let limit = discardLimit else { return }
    nextDiscard = offset + Self.discardStep
    let page = Self.pageSize
    let base = UInt(bitPattern: start)
    let first = (base + UInt(kept) + UInt(page - 1)) & ~UInt(page - 1)
    let last = (base + UInt(min(offset, limit))) & ~UInt(page - 1)
    guard last > first else { return }
    let newKept = Int(last - base)
    keptLocation = location(at: newKept)
    kept = newKept
    #if canImport(Glibc)
      _ = madvise(UnsafeMutableRawPointer(bitPattern: first), Int(last - first), MADV_DONTNEED)
    #endif
  }

  /// Line and column of the byte at `position` (at or after `kept`), counted as
  /// ``JSONParseError`` counts them: lines by `\n`, columns by UTF-8 characters.
  func location(at position: Int) -> (line: Int, column: Int) {
    var (line, column) = keptLocation
    var from = kept
    let end = min(position, bytes.count)
    while from < end, let hit = memchr(start + from, 0x0A, end - from) {
      line += 1
      column = 0
      from = UnsafeRawPointer(start).distance(to: UnsafeRawPointer(hit)) + 1
    }
    guard from < end else { return (line, column) }
    return (line, column + Self.characters(UnsafeRawPointer(start + from), end - from))
  }

  /// How many bytes of the `count` at `base` start a UTF-8 character (are not `10xxxxxx`).
  private static func characters(_ base: UnsafeRawPointer, _ count: Int) -> Int {
    let high: UInt64 = 0x8080_8080_8080_8080
    var words = 0
    var any: UInt64 = 0
    while (words + 1) * 8 <= count {
      any |= base.loadUnaligned(fromByteOffset: words * 8, as: UInt64.self)
      words += 1
    }
    var continuation = 0
    if any & high != 0 {
      for word in 0..<words {
        let w = base.loadUnaligned(fromByteOffset: word * 8, as: UInt64.self)
        continuation += (w & ~(w << 1) & high).nonzeroBitCount
      }
    }
    for tail in (words * 8)..<count
    where base.load(fromByteOffset: tail, as: UInt8.self) & 0xC0 == 0x80 {
      continuation += 1
    }
    return count - continuation
  }
}

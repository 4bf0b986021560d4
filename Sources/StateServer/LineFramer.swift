import JSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Splits stdin into lines in place, one large read at a time: no byte-by-byte reads, no copy
/// of a line that is parsed at once (``next(from:)``); ``frame(from:)`` copies a read's lines
/// once, into chunks any thread may parse. Used by one thread at a time (the reader thread, or
/// the main thread in ``MainLoop``, or the ``ParseAhead`` thread).
///
/// `\r\n` endings and blank lines are accepted; the limit applies to a message without its line
/// ending (`\n` or `\r\n`). A line longer than `maxMessageBytes` is never held in memory: once a
/// partial line passes the limit its bytes are dropped as they arrive and the line is reported
/// as ``InboundLine/oversize(bytes:)`` when its newline comes.
final class LineFramer {
  private let maxMessageBytes: Int
  private static let blockSize = 64 << 10
  private var buffer = [UInt8](repeating: 0, count: LineFramer.blockSize)
  private var start = 0  // first byte of the unconsumed partial line
  private var end = 0  // end of the bytes read so far
  private var skipped: Int? = nil  // length so far of an oversize line being skipped
  /// Bytes read so far: the input offset the lines returned so far reach.
  private(set) var offset = 0
  /// Lines already served, dropped one by one as new lines are parsed (``retire(_:)``).
  private var retired = RetiredLines()

  init(maxMessageBytes: Int) {
    self.maxMessageBytes = maxMessageBytes
  }

  /// Reads once from `fd` (blocking) and returns the lines completed by what was read, parsed
  /// here, and how many bytes that was; at the end of input (count <= 0) the lines end with
  /// ``InboundLine/endOfInput``.
  func next(from fd: Int32) -> (lines: [InboundLine], count: Int) {
    let (items, count) = readItems(from: fd)
    // Parsed in the buffer itself, before the next read moves it: no copy.
    let lines = buffer.withUnsafeBytes { raw in
      FramedChunk.parse(items, in: raw, base: 0) { dropRetiredLine() }
    }
    return (lines, count)
  }

  /// ``next(from:)`` without the parse: the lines go in chunks of at most
  /// ``FramedChunk/linesPerChunk`` lines sharing one copy of their bytes, for whichever thread
  /// parses them (``ParseAhead``).
  func frame(from fd: Int32) -> (chunks: [FramedChunk], count: Int) {
    let (items, count) = readItems(from: fd)
    guard !items.isEmpty else { return ([], count) }
    var low = Int.max
    var high = 0
    for case .text(let range) in items {
      low = min(low, range.lowerBound)
      high = max(high, range.upperBound)
    }
    let bytes = low < high ? Array(buffer[low..<high]) : []
    let base = low < high ? low : 0
    var chunks: [FramedChunk] = []
    chunks.reserveCapacity(items.count / FramedChunk.linesPerChunk + 1)
    var first = 0
    while first < items.count {
      let last = min(first + FramedChunk.linesPerChunk, items.count)
      chunks.append(FramedChunk(bytes: bytes, base: base, items: Array(items[first..<last])))
      first = last
    }
    return (chunks, count)
  }

  /// Gives back a buffer that a long line grew, once nothing framed in it is still to be
  /// parsed (by the thread that reads, between its reads). Left to the next read, unmapping
  /// hundreds of megabytes made the request after a large `store/open` wait.
  func shrinkAfterLongLine() {
    if end == 0 && buffer.count > 4 * Self.blockSize {
      buffer = [UInt8](repeating: 0, count: Self.blockSize)
    }
  }

  /// One read and the lines it completes, as ranges of `buffer` (valid until the next read).
  private func readItems(from fd: Int32) -> (items: [FramedChunk.Item], count: Int) {
    do {
      if end == 0 && buffer.count > 4 * Self.blockSize {
        buffer = [UInt8](repeating: 0, count: Self.blockSize)  // a long line grew it
      }
      if end == buffer.count {
        if start > 0 {
          buffer.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            memmove(base, base + start, end - start)
          }
          end -= start
          start = 0
        } else {
          // One line fills the buffer: grow up to the limit, past it skip the line.
          buffer.append(contentsOf: repeatElement(0, count: min(buffer.count, maxMessageBytes + 1)))
        }
      }
      let count = buffer.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        while true {
          let n = read(fd, base + end, raw.count - end)
          if n < 0 && errno == EINTR { continue }
          return n
        }
      }
      if count <= 0 {
        var batch: [FramedChunk.Item] = []
        buffer.withUnsafeBytes { raw in
          let length = messageLength(raw, start, end)
          if let skipped {
            batch.append(.oversize(bytes: skipped + length))
          } else if length > maxMessageBytes {
            batch.append(.oversize(bytes: length))
          } else if end > start {
            lineEnded(raw, start..<end, into: &batch)
          }
        }
        batch.append(.endOfInput)
        return (batch, count)
      }
      var batch: [FramedChunk.Item] = []
      let scanFrom = end
      end += count
      offset += count
      buffer.withUnsafeBytes { raw in
        guard let base = raw.baseAddress else { return }
        var cursor = scanFrom
        while cursor < end, let hit = memchr(base + cursor, 0x0A, end - cursor) {
          let newline = base.distance(to: UnsafeRawPointer(hit))
          let length = messageLength(raw, start, newline)
          if let skippedSoFar = skipped {
            batch.append(.oversize(bytes: skippedSoFar + length))
            skipped = nil
          } else if length > maxMessageBytes {
            batch.append(.oversize(bytes: length))
          } else {
            lineEnded(raw, start..<newline, into: &batch)
          }
          start = newline + 1
          cursor = start
        }
      }
      if start == end {
        // The buffer is not shrunk here: the lines just framed point into it until they are
        // parsed (or copied into chunks), after this call; the next read shrinks it.
        start = 0
        end = 0
      } else if skipped != nil || end - start > maxMessageBytes + 1 {
        // The partial line is already too long (one byte over may still be the `\r` of a
        // `\r\n` whose `\n` has not arrived): forget its bytes, remember only its length.
        skipped = (skipped ?? 0) + end - start
        start = 0
        end = 0
      }
      return (batch, count)
    }
  }

  /// The length of the message in `raw[start..<end]` (a line without its `\n`): a final `\r` is
  /// part of the line ending, not of the message.
  private func messageLength(_ raw: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Int {
    end > start && raw[end - 1] == 0x0D ? end - start - 1 : end - start
  }

  /// Takes served lines to free while the next ones are parsed (``RetiredLines``).
  func retire(_ batches: [[InboundLine]]) {
    for batch in batches { retired.retire(batch) }
  }

  /// Frees every retired line now (before this thread stops reading).
  func dropRetired() {
    retired.dropAll()
  }

  /// Frees one retired line, two while many wait, so the backlog never grows.
  @inline(__always)
  func dropRetiredLine() {
    retired.dropOne()
  }

  var retiredCount: Int { retired.count }

  /// Frames one line (without its `\n`) of `raw`; blank lines vanish.
  private func lineEnded(
    _ raw: UnsafeRawBufferPointer, _ range: Range<Int>, into batch: inout [FramedChunk.Item]
  ) {
    var range = range
    if range.upperBound > range.lowerBound && raw[range.upperBound - 1] == 0x0D {
      range = range.lowerBound..<(range.upperBound - 1)
    }
    if raw[range].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
    batch.append(.text(range))
  }
}

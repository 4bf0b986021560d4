import CPosix
import JSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The reader stage: splits input into lines in place, one large read at a time (no
/// byte-by-byte reads, no copy of a line), and parses each line right there, before the next
/// read moves the buffer. Used by one thread: the main thread in ``MainLoop`` for stdin, or
/// an attached client's ``LineReader``.
///
/// `\r\n` endings and blank lines are accepted; the limit applies to a message without its line
/// ending (`\n` or `\r\n`). A line longer than `maxMessageBytes` is never held in memory: once a
/// partial line passes the limit its bytes are dropped as they arrive and the line is reported
/// as ``InboundLine/oversize(bytes:)`` when its newline comes.
final class LineFramer {
  private let maxMessageBytes: Int
  private static let blockSize = 64 << 10
  private var buffer = ReadBuffer(count: LineFramer.blockSize)
  private var start = 0  // first byte of the unconsumed partial line
  private var end = 0  // end of the bytes read so far
  private var skipped: Int? = nil  // length so far of an oversize line being skipped
  private var skippedID: JSON? = nil  // its request's id, read from its head (`OversizeHead`)
  private var widenedPipe = false  // whether a long line asked for a larger pipe already
  /// From this length on a line is parsed whole, giving its bytes back as the parse goes
  /// (``JSONParseOptions/discardsParsedBytes``): the text of a large state is then not
  /// resident beside the tree it becomes. Shorter lines are read in place.
  static let discardingLength = 4 << 20

  /// One framed line: its bytes in `buffer` (without the line ending), or a line that needs no
  /// parse (an oversize line, the end of input).
  private enum Item {
    case text(Range<Int>)
    case oversize(bytes: Int, id: JSON?)
    case endOfInput
  }
  /// Bytes read so far: the input offset the lines returned so far reach.
  private(set) var offset = 0

  init(maxMessageBytes: Int) {
    self.maxMessageBytes = maxMessageBytes
  }

  /// Reads once from `fd` (blocking) and returns the lines completed by what was read, parsed
  /// here, and how many bytes that was; at the end of input (count <= 0) the lines end with
  /// ``InboundLine/endOfInput``.
  func next(from fd: Int32) -> (lines: [InboundLine], count: Int) {
    let (items, count) = readItems(from: fd)
    // Parsed in the buffer itself, before the next read moves it: no copy.
    let keeper = ReadBufferKeeper()
    let lines = buffer.withUnsafeBytes { raw in Self.parse(items, in: raw, keeper: keeper) }
    if keeper.isWanted { handOver(to: keeper) }
    // A long line grew the buffer; once it is parsed nothing points into it, so it goes now
    // rather than at the next read, which comes only after the lines are served: the open of
    // a large state would otherwise keep a copy of its text alive through the whole open.
    if end == 0 { shrink() }
    return (lines, count)
  }

  /// Gives the buffer, whose bytes a line parsed from it still points into, to `keeper`, and
  /// reads on into a new one, moving into it the partial line after the lines parsed. The
  /// buffer's memory does not move: a mapping is only moved by growing it, which its keeper
  /// never does.
  private func handOver(to keeper: ReadBufferKeeper) {
    var kept = ReadBuffer(count: max(Self.blockSize, end - start))
    swap(&kept, &buffer)
    if end > start {
      let (start, end) = (self.start, self.end)
      kept.withUnsafeBytes { old in
        buffer.withUnsafeMutableBytes { new in
          guard let from = old.baseAddress, let to = new.baseAddress else { return }
          to.copyMemory(from: from + start, byteCount: end - start)
        }
      }
    }
    end -= start
    start = 0
    keeper.buffer = consume kept
  }

  /// Back to one block, when a long line grew the buffer and no partial line is in it.
  private func shrink() {
    if buffer.count > 4 * Self.blockSize {
      buffer = ReadBuffer(count: Self.blockSize)
    }
  }

  /// One read and the lines it completes, as ranges of `buffer` (valid until the next read).
  private func readItems(from fd: Int32) -> (items: [Item], count: Int) {
    do {
      if end == 0 { shrink() }
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
          buffer.grow(to: buffer.count + min(buffer.count, maxMessageBytes + 1))
          if buffer.count >= ReadBuffer.mappedBytes && !widenedPipe {
            // A long line through a pipe came 64 KB a read (the pipe's default size), each
            // read a wake-up of the writer and of this thread.
            cposix_widen_pipe(fd, 1 << 20)
            widenedPipe = true
          }
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
        var batch: [Item] = []
        buffer.withUnsafeBytes { raw in
          let length = messageLength(raw, start, end)
          if let skipped {
            batch.append(.oversize(bytes: skipped + length, id: skippedID))
          } else if length > maxMessageBytes {
            batch.append(.oversize(bytes: length, id: Self.headID(raw, start, end)))
          } else if end > start {
            lineEnded(raw, start..<end, into: &batch)
          }
        }
        batch.append(.endOfInput)
        return (batch, count)
      }
      var batch: [Item] = []
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
            batch.append(.oversize(bytes: skippedSoFar + length, id: skippedID))
            skipped = nil
            skippedID = nil
          } else if length > maxMessageBytes {
            batch.append(.oversize(bytes: length, id: Self.headID(raw, start, newline)))
          } else {
            lineEnded(raw, start..<newline, into: &batch)
          }
          start = newline + 1
          cursor = start
        }
      }
      if start == end {
        // The buffer is not shrunk here: the lines just framed point into it until they are
        // parsed, after this call (`next(from:)` shrinks it then).
        start = 0
        end = 0
      } else if skipped != nil || end - start > maxMessageBytes + 1 {
        // The partial line is already too long (one byte over may still be the `\r` of a
        // `\r\n` whose `\n` has not arrived): forget its bytes, remember only its length
        // and the id its head names.
        if skipped == nil {
          skippedID = buffer.withUnsafeBytes { raw in Self.headID(raw, start, end) }
        }
        skipped = (skipped ?? 0) + end - start
        start = 0
        end = 0
      }
      return (batch, count)
    }
  }

  /// Parses the framed `items`, whose ranges point into `raw`, in order. A plain request's
  /// framing is read in place (``RequestEnvelope``), everything else by the one parser.
  private static func parse(
    _ items: [Item], in raw: UnsafeRawBufferPointer, keeper: ReadBufferKeeper
  ) -> [InboundLine] {
    var lines: [InboundLine] = []
    lines.reserveCapacity(items.count)
    for item in items {
      switch item {
      case .oversize(let bytes, let id):
        lines.append(.oversize(bytes: bytes, id: id))
      case .endOfInput:
        lines.append(.endOfInput)
      case .text(let range):
        let line = UnsafeRawBufferPointer(rebasing: raw[range])
        if line.count >= discardingLength, let open = openLeavingText(line, keeper: keeper) {
          lines.append(open)
        } else if line.count >= discardingLength {
          // Parsed whole: a failure of the params read in place would parse the line again,
          // and its bytes are given back behind the parse. The envelope is then read from the
          // parsed object, so a plain request is still served as one.
          do {
            lines.append(
              RequestEnvelope.line(
                parsed: try JSON(parsing: line, options: .discardsParsedBytes)))
          } catch {
            lines.append(.malformed(error))
          }
        } else if let request = RequestEnvelope(reading: line) {
          lines.append(.request(request))
        } else {
          do {
            lines.append(.message(try JSON(parsing: line)))
          } catch {
            lines.append(.malformed(error))
          }
        }
      }
    }
    return lines
  }

  /// The length of the message in `raw[start..<end]` (a line without its `\n`): a final `\r` is
  /// part of the line ending, not of the message.
  private func messageLength(_ raw: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Int {
    end > start && raw[end - 1] == 0x0D ? end - start - 1 : end - start
  }

  /// Frames one line (without its `\n`) of `raw`; blank lines vanish.
  private func lineEnded(
    _ raw: UnsafeRawBufferPointer, _ range: Range<Int>, into batch: inout [Item]
  ) {
    var range = range
    if range.upperBound > range.lowerBound && raw[range.upperBound - 1] == 0x0D {
      range = range.lowerBound..<(range.upperBound - 1)
    }
    if raw[range].allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
    batch.append(.text(range))
  }
}

extension LineFramer {
  /// The id the head of the too-long line at `start..<end` of `raw` names, if any.
  fileprivate static func headID(_ raw: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> JSON? {
    OversizeHead.id(
      in: UnsafeRawBufferPointer(rebasing: raw[start..<min(end, start + OversizeHead.length)]))
  }
}

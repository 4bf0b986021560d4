import JSON

/// Input lines framed but not parsed yet: a run of up to ``linesPerChunk`` lines of one read,
/// with its own copy of their bytes, so any thread may parse it while the reader reads on.
///
/// The ``ParseAhead`` thread queues a read's chunks in its ``Inbox`` before parsing them;
/// whichever thread claims a chunk first parses it (``Inbox/claim()``): the parse-ahead thread
/// after each read, the main loop when it has served every parsed line (work stealing), so
/// the parse, the slowest part of a pipelined request, is shared by both threads. Serving
/// stays in input order whoever parses.
struct FramedChunk: Sendable {
  /// One framed line: its bytes in the chunk (without the line ending), or a line that needs
  /// no parse (an oversize line, the end of input). Plain values, no reference, so a chunk's
  /// items are copied and freed as raw memory.
  enum Item: Sendable {
    case text(Range<Int>)
    case oversize(bytes: Int)
    case endOfInput
  }

  /// A 64 KiB read of pipelined increments is about 600 lines: ten chunks. Small chunks let the
  /// main loop take a fair share when serving leaves it idle (it claims one at a time), and
  /// shorten its wait for a chunk the parse-ahead thread holds before the ones it parsed; each
  /// costs two locked calls and two arrays.
  static let linesPerChunk = 64

  /// The bytes the `.text` ranges point into, less `base`.
  let bytes: [UInt8]
  let base: Int
  let items: [Item]

  /// Whether the chunk ends the input.
  var endsInput: Bool {
    if case .endOfInput? = items.last { return true }
    return false
  }

  /// The chunk's lines, parsed here in order; `beforeEachParse` runs before each line's parse
  /// (the parse-ahead thread frees a served line there, ``LineFramer/dropRetiredLine()``).
  func parse(_ beforeEachParse: () -> Void = {}) -> [InboundLine] {
    bytes.withUnsafeBytes { raw in
      Self.parse(items, in: raw, base: base, beforeEachParse)
    }
  }

  /// Parses `items` whose ranges, less `base`, point into `raw`.
  @inline(__always)
  static func parse(
    _ items: [Item], in raw: UnsafeRawBufferPointer, base: Int, _ beforeEachParse: () -> Void
  ) -> [InboundLine] {
    var lines: [InboundLine] = []
    lines.reserveCapacity(items.count)
    for item in items {
      switch item {
      case .oversize(let bytes):
        lines.append(.oversize(bytes: bytes))
      case .endOfInput:
        lines.append(.endOfInput)
      case .text(let range):
        beforeEachParse()
        let line = UnsafeRawBufferPointer(
          rebasing: raw[(range.lowerBound - base)..<(range.upperBound - base)])
        if let request = RequestEnvelope(reading: line) {
          lines.append(.request(request))
          continue
        }
        do {
          lines.append(.message(try JSON(parsing: line)))
        } catch {
          lines.append(.malformed(error))
        }
      }
    }
    return lines
  }
}

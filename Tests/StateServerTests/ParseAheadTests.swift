import JSON
import Testing

@testable import StateServer

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct ParseAheadTests {
  /// Takes from the inbox, waiting for its wake-ups, until reading is given back or the input
  /// ends; returns the lines as text, `"end"` for the end of input, and the offset reached.
  func collect(
    _ parseAhead: ParseAhead, wakes: AsyncStream<Void>
  ) async -> (lines: [String], offset: Int, returned: Bool) {
    var lines: [String] = []
    var offset = 0
    for await _ in wakes {
      while true {
        let taken = parseAhead.inbox.takeForMainLoop()
        offset = taken.offset
        for line in taken.lines {
          switch line {
          case .request, .message: lines.append(line.message?.description ?? "")
          case .endOfInput: lines.append("end")
          default: lines.append("other")
          }
        }
        if taken.returned { return (lines, offset, true) }
        if lines.last == "end" { return (lines, offset, false) }
        if taken.lines.isEmpty { break }
      }
    }
    return (lines, offset, false)
  }

  func write(_ text: String, to fd: Int32) {
    let bytes = Array(text.utf8)
    #expect(bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) } == bytes.count)
  }

  @Test func readingGoesBackAndForthWithoutLosingOrReorderingALine() async {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else {
      Issue.record("pipe failed")
      return
    }
    defer { close(fds[0]) }
    let (wakes, continuation) = AsyncStream<Void>.makeStream()
    let framer = LineFramer(maxMessageBytes: 1 << 20)
    let parseAhead = ParseAhead(
      fd: fds[0], framer: framer, output: OutputQueue(maxMessages: 10),
      maxQueuedInputBytes: 1 << 20
    ) { continuation.yield() }

    // Written before the hand-over: the thread reads them all, then finds the pipe empty and
    // gives reading back behind them.
    write("[1]\n[2]\n[3]\n", to: fds[1])
    parseAhead.takeOver()
    let first = await collect(parseAhead, wakes: wakes)
    #expect(first.lines == ["[1]", "[2]", "[3]"])
    #expect(first.returned)
    #expect(first.offset == 12)

    // Reading is the caller's again: the next line is read here, with the same framer.
    write("[4]\n", to: fds[1])
    let (own, count) = framer.next(from: fds[0])
    #expect(count == 4)
    #expect(own.count == 1)
    #expect(framer.offset == 16)

    // Handed over again; the end of input ends the thread's reading for good.
    write("[5]\n[6]", to: fds[1])
    close(fds[1])
    parseAhead.takeOver()
    let second = await collect(parseAhead, wakes: wakes)
    #expect(second.lines == ["[5]", "[6]", "end"])
    #expect(!second.returned)
    #expect(second.offset == 23)
  }

  @Test func aServedBatchIsTakenFromTheCaller() {
    let parseAhead = ParseAhead(
      fd: -1, framer: LineFramer(maxMessageBytes: 16), output: OutputQueue(maxMessages: 10),
      maxQueuedInputBytes: 1 << 20
    ) {}
    var lines: [InboundLine] = [.message(.integer(1)), .endOfInput]
    parseAhead.release(&lines)
    #expect(lines.isEmpty)
  }
}

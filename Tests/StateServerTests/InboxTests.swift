import JSON
import Testing

@testable import StateServer

#if canImport(Glibc)
  import Glibc
#endif

/// The inbox's chunks (``FramedChunk``): parsed by whichever thread claims them, served in
/// input order.
@Suite struct InboxTests {
  /// Frames `text` in one read (the pipe then ends when `ends`): the chunks, and the byte count.
  func frame(_ text: String, ends: Bool = false) -> (chunks: [FramedChunk], count: Int) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else {
      Issue.record("pipe failed")
      return ([], 0)
    }
    defer { close(fds[0]) }
    let bytes = Array(text.utf8)
    #expect(bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) } == bytes.count)
    if ends { close(fds[1]) }
    let framer = LineFramer(maxMessageBytes: 64)
    var (chunks, count) = framer.frame(from: fds[0])
    if ends {
      let (last, _) = framer.frame(from: fds[0])
      chunks += last
    } else {
      close(fds[1])
    }
    return (chunks, count)
  }

  /// The same text read and parsed at once, on one thread (``LineFramer/next(from:)``).
  func parsedAtOnce(_ text: String) -> [String] {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return [] }
    defer { close(fds[0]) }
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
    close(fds[1])
    let framer = LineFramer(maxMessageBytes: 64)
    var lines: [InboundLine] = []
    while true {
      let (batch, count) = framer.next(from: fds[0])
      lines += batch
      if count <= 0 { break }
    }
    return describe(lines)
  }

  func describe(_ lines: [InboundLine]) -> [String] {
    lines.map { line in
      switch line {
      case .request, .message: line.message?.description ?? ""
      case .malformed(let error): "malformed at \(error.position)"
      case .oversize(let bytes): "oversize \(bytes)"
      case .endOfInput: "end"
      }
    }
  }

  /// 300 lines, some of them blank, malformed or too long, ending without a newline.
  let text =
    (1...300).map { number in
      switch number % 50 {
      case 7: "{\"id\": \(number), oops}\n"
      case 13: "   \r\n"
      case 21: "[\"\(String(repeating: "x", count: 80))\"]\n"
      default: "{\"id\":\(number)}\r\n"
      }
    }.joined() + "[301]"

  @Test func chunksParsedOutOfOrderAreServedInInputOrder() {
    let (chunks, count) = frame(text, ends: true)
    // 300 lines less 6 blank in chunks of at most linesPerChunk, then the unterminated last
    // line and the end.
    let size = FramedChunk.linesPerChunk
    let full = Array(repeating: size, count: 294 / size)
    #expect(chunks.map(\.items.count) == full + (294 % size > 0 ? [294 % size] : []) + [2])
    #expect(chunks.count >= 3)
    let inbox = Inbox(capacity: 1024, wake: {})
    #expect(inbox.push(chunks: chunks, bytes: count, through: count))
    // The reader holds the first chunk: the consumer parses all the others itself, and can
    // serve none of them before the first.
    guard let first = inbox.claim() else {
      Issue.record("no chunk to claim")
      return
    }
    #expect(first.number == 0)
    let early = inbox.takeForMainLoop()
    #expect(early.lines.isEmpty)
    #expect(early.offset == 0)
    #expect(inbox.claim() == nil)  // all parsed (by the consumer) or claimed
    inbox.finish(first.number, first.chunk.parse())
    let taken = inbox.takeForMainLoop()
    #expect(describe(taken.lines) == parsedAtOnce(text))
    #expect(describe(taken.lines).filter { $0.hasPrefix("malformed") }.count == 6)
    #expect(describe(taken.lines).filter { $0.hasPrefix("oversize") }.count == 6)
    #expect(describe(taken.lines).last == "end")
    #expect(taken.offset == count)
    #expect(!inbox.push(chunks: [], bytes: 0, through: count))  // the end closed the inbox
  }

  @Test func twoThreadsParsingTheSameChunksServeWhatOneThreadWould() async {
    let (chunks, count) = frame(text, ends: true)
    let inbox = Inbox(capacity: 1024, wake: {})
    #expect(inbox.push(chunks: chunks, bytes: count, through: count))
    // The other thread parses chunks while this one takes, parsing what it finds waiting.
    let other = Task.detached {
      var parsed = 0
      while let (number, chunk) = inbox.claim() {
        inbox.finish(number, chunk.parse())
        parsed += 1
      }
      return parsed
    }
    var served: [InboundLine] = []
    while describe(Array(served.suffix(1))) != ["end"] {
      served += inbox.takeForMainLoop().lines
      await Task.yield()
    }
    _ = await other.value
    #expect(describe(served) == parsedAtOnce(text))
  }

  @Test func theLastChunkOfAReadReachesTheReadsOffsetAndAnEmptyReadMovesItOn() {
    let size = FramedChunk.linesPerChunk
    let (chunks, count) = frame((1...(size + 36)).map { "[\($0)]\n" }.joined())
    #expect(chunks.count == 2)
    let inbox = Inbox(capacity: 1024, wake: {})
    #expect(inbox.push(chunks: chunks, bytes: count, through: 1000 + count))
    // A read inside a long line: no chunk, but the offset goes with the last chunk.
    #expect(inbox.push(chunks: [], bytes: 10, through: 1010 + count))
    #expect(inbox.readOffset == 1010 + count)
    // The consumer parses one chunk and serves it before it parses the next: the lines of the
    // first chunk reach only the offset before the read (its first line may begin before).
    let first = inbox.takeForMainLoop()
    #expect(first.lines.count == size)
    #expect(first.offset == 0)
    let second = inbox.takeForMainLoop()
    #expect(second.lines.count == 36)
    #expect(second.offset == 1010 + count)
    #expect(inbox.takeForMainLoop().lines.isEmpty)
  }

  @Test func readingIsGivenBackOnlyBehindEveryChunk() {
    let (chunks, count) = frame("[1]\n[2]\n")
    let inbox = Inbox(capacity: 1024, wake: {})
    #expect(inbox.push(chunks: chunks, bytes: count, through: count))
    guard let held = inbox.claim() else {
      Issue.record("no chunk to claim")
      return
    }
    inbox.returnReading()
    let early = inbox.takeForMainLoop()
    #expect(early.lines.isEmpty)
    #expect(!early.returned)  // the chunk before the hand-back is not served yet
    inbox.finish(held.number, held.chunk.parse())
    let taken = inbox.takeForMainLoop()
    #expect(describe(taken.lines) == ["[1]", "[2]"])
    #expect(taken.returned)
  }
}

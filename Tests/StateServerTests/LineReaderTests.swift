import Foundation
import JSON
import Testing

@testable import StateServer

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct LineReaderTests {
  /// Feeds `input` through a pipe to a reader thread and returns what it handed over.
  func read(_ input: [UInt8], maxMessageBytes: Int = 1 << 20) async -> [InboundLine] {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else {
      Issue.record("pipe failed")
      return []
    }
    let (wakes, continuation) = AsyncStream<Void>.makeStream()
    let inbox = Inbox(capacity: 1 << 20) { continuation.yield() }
    let reader = LineReader(
      fd: fds[0], maxMessageBytes: maxMessageBytes, inbox: inbox,
      output: OutputQueue(maxMessages: 10))
    reader.start()
    let writer = fds[1]
    // A thread of its own for the blocking writes, not a task: a task blocked in `write` holds
    // a thread of the cooperative pool (two on a two-core machine) that other tests need.
    // The reader sees the end of input only after the last write, when the writer is closed.
    Thread {
      input.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count, let base = raw.baseAddress {
          let n = write(writer, base + offset, raw.count - offset)
          if n <= 0 { break }
          offset += n
        }
      }
      close(writer)
    }.start()
    var lines: [InboundLine] = []
    for await _ in wakes {
      while true {
        let batch = inbox.take().lines
        if batch.isEmpty { break }
        lines += batch
      }
      if case .endOfInput? = lines.last { break }
    }
    close(fds[0])
    return lines
  }

  func describe(_ lines: [InboundLine]) -> [String] {
    lines.map { line in
      switch line {
      case .request, .message, .openFromText: line.message?.description ?? ""
      case .malformed(let error): "malformed:\(error.kind.rawValue)"
      case .oversize(let bytes, let id): "oversize:\(bytes)" + (id.map { ":id=\($0)" } ?? "")
      case .endOfInput: "end"
      }
    }
  }

  @Test func crlfAndBlankLinesAndAMissingFinalNewline() async {
    let lines = await read(Array("[1]\r\n\n   \r\n{\"a\":2}\n[3]".utf8))
    #expect(describe(lines) == ["[1]", #"{"a":2}"#, "[3]", "end"])
  }

  @Test func anOversizeLineIsSkippedAndTheNextOneServed() async {
    let big = "[" + String(repeating: "1,", count: 300_000) + "1]"
    let lines = await read(Array((big + "\n[2]\n").utf8), maxMessageBytes: 1000)
    #expect(describe(lines) == ["oversize:\(big.utf8.count)", "[2]", "end"])
  }

  @Test func crlfEndingDoesNotCountTowardMaxMessageBytes() async {
    // A message of exactly the limit is served whether it ends in `\n`, `\r\n` or the end of
    // input; one byte more is refused with its size counted without the line ending.
    let lines = await read(
      Array("[1,2]\r\n[1,2]\n[1,22]\r\n[3,4]\r".utf8), maxMessageBytes: 5)
    #expect(describe(lines) == ["[1,2]", "[1,2]", "oversize:6", "[3,4]", "end"])
    let last = await read(Array("[1,22]".utf8), maxMessageBytes: 5)
    #expect(describe(last) == ["oversize:6", "end"])
  }

  @Test func linesSpanningManyReadBlocksArriveWhole() async {
    let long = "[" + String(repeating: "\"abcdefgh\",", count: 100_000) + "0]"
    let lines = await read(Array((long + "\n" + long + "\n").utf8))
    #expect(lines.count == 3)
    if case .message(let json) = lines[1] { #expect(json.arrayValue?.count == 100_001) }
  }

  @Test func rawNulAndInvalidUTF8AreMalformed() async {
    let lines = await read([0x5B, 0x31, 0x00, 0x5D, 0x0A, 0x22, 0xFF, 0x22, 0x0A])
    #expect(describe(lines) == ["malformed:nulByte", "malformed:invalidUTF8", "end"])
  }
}

import JSON
import Testing

@testable import StateServer

#if canImport(Glibc)
  import Glibc
#endif

/// A response written while it is sent (``StreamedText``): the writer thread sends each piece as
/// the state actor hands it on, in its place among the other lines, and a text that fails is
/// answered by its replacement.
@Suite struct StreamedTextTests {
  typealias Pipe = StdoutWriterTests.Pipe

  /// The writer thread on `pipe`, with the lines queued around a streamed response of id 2.
  struct Fixture {
    let pipe: Pipe
    let queue: OutputQueue
    let text: StreamedText
    let before: Outgoing = .dispatched(id: 1, store: "s", version: 1)
    let after: Outgoing = .dispatched(id: 3, store: "s", version: 2)

    init(maxBytes: Int = 1 << 30) throws {
      pipe = try #require(Pipe())
      queue = OutputQueue(maxMessages: 100, maxBytes: maxBytes)
      text = StreamedText(answering: 2, budget: queue)
      queue.append([before, .streamed(text, barriers: ["s"]), after]) { _ in }
      StdoutWriter(fd: pipe.writeEnd, queue: queue, log: Log(level: .error)).start()
    }

    func line(_ outgoing: Outgoing) -> [UInt8] {
      var writer = JSONWriter()
      try? outgoing.write(to: &writer)
      return writer.withUnsafeBytes { Array($0) }
    }

    /// The bytes of a piece the state actor hands on.
    func append(_ piece: String) {
      Array(piece.utf8).withUnsafeBytes { text.append($0) }
    }
  }

  let head = Array(#"{"jsonrpc":"2.0","id":2,"result":"#.utf8)

  @Test func eachPieceGoesOutBeforeTheTextIsWhole() throws {
    let fixture = try Fixture()
    defer { fixture.queue.finish() }
    fixture.append(#"{"rows":[1,"#)
    // Read before the text ends: the line before it, the head and the first piece are out.
    let first = fixture.line(fixture.before) + head + Array(#"{"rows":[1,"#.utf8)
    #expect(fixture.pipe.read(first.count) == first)
    fixture.append("2,3]")
    fixture.append("}")
    fixture.text.end(.finished)
    let rest = Array("2,3]}}\n".utf8) + fixture.line(fixture.after)
    #expect(fixture.pipe.read(rest.count) == rest)
    let whole = first + rest
    let lines = whole.split(separator: 0x0A).map { try? JSON(parsing: Array($0)) }
    #expect(lines[1]?["result"] == ["rows": [1, 2, 3]])
  }

  @Test func aTextThatFailsBeforeAnyPieceIsAnsweredByItsReplacementAlone() throws {
    let fixture = try Fixture()
    defer { fixture.queue.finish() }
    let replacement = Outgoing.failure(id: 2, error: .internalError("cannot be written"))
    fixture.text.end(.failed(replacement: replacement))
    let expected =
      fixture.line(fixture.before) + fixture.line(replacement) + fixture.line(fixture.after)
    #expect(fixture.pipe.read(expected.count) == expected)
  }

  @Test func aTextThatFailsAfterAPieceEndsItsLineThereAndIsFollowedByItsReplacement() throws {
    let fixture = try Fixture()
    defer { fixture.queue.finish() }
    let replacement = Outgoing.failure(id: 2, error: .internalError("cannot be written"))
    fixture.append(#"{"rows":["#)
    fixture.text.end(.failed(replacement: replacement))
    let expected =
      fixture.line(fixture.before) + head + Array(#"{"rows":["#.utf8) + [0x0A]
      + fixture.line(replacement) + fixture.line(fixture.after)
    #expect(fixture.pipe.read(expected.count) == expected)
  }

  /// The pieces count in the output's budget until written: a client that stops reading makes
  /// the queue full (the reader and the state actor then wait), and its reading empties it.
  @Test func piecesCountInTheBudgetUntilWritten() async throws {
    let fixture = try Fixture(maxBytes: 1 << 20)
    defer { fixture.queue.finish() }
    let piece = [UInt8](repeating: UInt8(ascii: "1"), count: 1 << 19)
    var sent = fixture.line(fixture.before) + head + Array("[".utf8)
    fixture.append("[")
    // More than the pipe and the budget take together, while nobody reads.
    for _ in 0..<8 {
      piece.withUnsafeBytes { fixture.text.append($0) }
      fixture.append(",")
      sent += piece + Array(",".utf8)
    }
    #expect(fixture.queue.isOverBudget)
    fixture.append("2]")
    fixture.text.end(.finished)
    sent += Array("2]}\n".utf8) + fixture.line(fixture.after)
    #expect(fixture.pipe.read(sent.count) == sent)
    // Drained: the writer has given back everything it took.
    fixture.queue.finish()
    await fixture.queue.drained()
    #expect(!fixture.queue.isOverBudget)
  }
}

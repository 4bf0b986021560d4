import JSON
import Testing

@testable import StateServer

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct LineFramerTests {
  /// The lines of one read of `text` through `framer`, as text.
  func lines(_ text: String, _ framer: LineFramer) -> [String] {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else {
      Issue.record("pipe failed")
      return []
    }
    defer { close(fds[0]) }
    let bytes = Array(text.utf8)
    #expect(bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) } == bytes.count)
    close(fds[1])
    let (batch, count) = framer.next(from: fds[0])
    #expect(count == bytes.count)
    return batch.map { line in
      if case .message(let json) = line { return json.description }
      return "other"
    }
  }

  @Test func retiredLinesAreFreedOneForEachLineParsed() {
    let framer = LineFramer(maxMessageBytes: 1 << 20)
    framer.retire([[.message([1]), .message([2])], [], [.endOfInput, .message("x")]])
    #expect(framer.retiredCount == 4)
    // A blank line parses nothing, so frees nothing.
    #expect(lines("[10]\n[11]\n\n[12]\n", framer) == ["[10]", "[11]", "[12]"])
    #expect(framer.retiredCount == 1)
    #expect(lines("[13]\n[14]\n", framer) == ["[13]", "[14]"])
    #expect(framer.retiredCount == 0)
  }

  @Test func aLargeBacklogOfRetiredLinesShrinksTwiceAsFastAsLinesCome() {
    let framer = LineFramer(maxMessageBytes: 1 << 20)
    framer.retire([Array(repeating: .message(["a": [1, 2]]), count: 3_000)])
    let text = (0..<10).map { "[\($0)]\n" }.joined()
    #expect(lines(text, framer) == (0..<10).map { "[\($0)]" })
    #expect(framer.retiredCount == 3_000 - 20)
    framer.dropRetired()
    #expect(framer.retiredCount == 0)
    #expect(lines("[1]\n", framer) == ["[1]"])
  }
}

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
      line.message?.description ?? "other"
    }
  }

  /// A file holding `text`, open for reading at its start (a pipe holds only 64 KiB).
  func file(_ text: String) -> Int32 {
    var template = Array("/tmp/line-framer-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    guard fd >= 0 else {
      Issue.record("mkstemp failed")
      return -1
    }
    unlink(&template)
    let bytes = Array(text.utf8)
    #expect(bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == bytes.count)
    lseek(fd, 0, SEEK_SET)
    return fd
  }

  /// A line that grew the buffer past four read blocks, then the buffer's shrink back: the
  /// lines framed by the read that completes it are parsed after that
  /// read, so the shrink must wait for the next one.
  let longLine = "[\"" + String(repeating: "x", count: 300_000) + "\"]\n[2]\n"

  @Test func aLineLongerThanFourReadBlocksParsesWhole() {
    let fd = file(longLine)
    defer { close(fd) }
    let framer = LineFramer(maxMessageBytes: 1 << 20)
    var lines: [InboundLine] = []
    while true {
      let (batch, count) = framer.next(from: fd)
      lines += batch
      if count <= 0 { break }
    }
    expectLongLineWhole(lines)
  }

  /// `longLine` read back: the long line whole, then `[2]`, then the end of input.
  private func expectLongLineWhole(
    _ lines: [InboundLine], sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(lines.count == 3, sourceLocation: sourceLocation)
    guard case .message(.array(let elements))? = lines.first,
      case .string(let text)? = elements.first
    else {
      Issue.record(
        "the long line did not parse: \(String(describing: lines.first).prefix(200))",
        sourceLocation: sourceLocation)
      return
    }
    #expect(text.utf8.count == 300_000, sourceLocation: sourceLocation)
    guard case .message(let last)? = lines.dropFirst().first else {
      Issue.record("no second line", sourceLocation: sourceLocation)
      return
    }
    #expect(last == [2], sourceLocation: sourceLocation)
  }
}

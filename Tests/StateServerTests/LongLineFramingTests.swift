import Testing

@testable import JSON
@testable import StateServer

#if canImport(Glibc)
  import Glibc
#endif

/// A line of at least `LineFramer.discardingLength` bytes: the `store/open` of a large state
/// leaves its large arrays as text (`DeferredArrays`), read when the store decodes them, and
/// when that text is not JSON the line is answered as its whole parse; any other is parsed
/// whole, giving its bytes back behind the parse: a plain request is still served as a
/// request, anything else as the whole parse gives it, and an error deep inside reports the
/// place the whole parse of the same bytes reports.
@Suite struct LongLineFramingTests {
  /// Every line framed from a file holding `text`.
  func frame(_ text: [UInt8]) -> [InboundLine] {
    var template = Array("/tmp/long-line-XXXXXX".utf8CString)
    let fd = mkstemp(&template)
    guard fd >= 0 else {
      Issue.record("mkstemp failed")
      return []
    }
    unlink(&template)
    defer { close(fd) }
    #expect(text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == text.count)
    lseek(fd, 0, SEEK_SET)
    let framer = LineFramer(maxMessageBytes: 1 << 30)
    var lines: [InboundLine] = []
    while true {
      let (batch, count) = framer.next(from: fd)
      lines += batch
      if count <= 0 { break }
    }
    return lines
  }

  /// A `store/open` line whose state holds `count` notes, `inside` spliced in after them.
  func storeOpen(_ count: Int, inside: String = "", envelope: String = #""jsonrpc":"2.0""#)
    -> String
  {
    let notes = (0..<count).map { i in
      #"{"id":"n\#(i)","text":"note \#(i) é","createdAt":"2026-01-01T00:00:00.000Z"}"#
    }.joined(separator: ",")
    return #"{\#(envelope),"id":7,"method":"store/open","params":{"feature":"notes","#
      + #""store":"big","state":{"notes":[\#(notes)\#(inside)]}}}"#
  }

  @Test func aStoreOpenLeavesItsNotesAsText() throws {
    let line = storeOpen(60_000)
    #expect(line.utf8.count > LineFramer.discardingLength)
    // No newline after the last line: it is still partial when the long line is handed on
    // with its buffer, and must come through whole from the next buffer.
    let lines = frame(Array((line + "\n[2]").utf8))
    #expect(lines.count == 3)
    guard case .openFromText(let request, let text)? = lines.first else {
      Issue.record("not left as text: \(String(describing: lines.first).prefix(200))")
      return
    }
    #expect(request.id == 7)
    #expect(request.method == "store/open")
    #expect(text.arrays.map(\.tokens) == [["notes"]])
    let whole = try JSON(parsing: line)
    #expect(request.params?["state"] == ["notes": []])
    #expect(try text.tree(of: 0) == whole["params"]?["state"]?["notes"])
    #expect(text.isWellFormed())
    #expect(lines.dropFirst().first?.message == [2])
  }

  @Test func aStoreOpenNamedOtherwiseIsARequestParsedWhole() throws {
    let line = storeOpen(60_000).replacingOccurrences(of: "store/open", with: #"store\/open"#)
    let lines = frame(Array((line + "\n").utf8))
    guard case .request(let request)? = lines.first else {
      Issue.record("not a request: \(String(describing: lines.first).prefix(200))")
      return
    }
    #expect(request.method == "store/open")
    #expect(request.message == (try JSON(parsing: line)))
  }

  @Test func anotherMessageIsTheWholeParse() throws {
    let line = storeOpen(60_000, envelope: #""jsonrpc":"1.0""#)
    let lines = frame(Array((line + "\n").utf8))
    guard case .message(let message)? = lines.first else {
      Issue.record("not a message: \(String(describing: lines.first).prefix(200))")
      return
    }
    #expect(message == (try JSON(parsing: line)))
  }

  /// An error inside the notes is found by the framer's parse when it shows in the brackets
  /// (`,]` closes the array early), else once the notes' text is read; either way the line is
  /// answered with the error of its whole parse.
  @Test(arguments: [(#",]"#, false), (#",{"id":1,"id":2}"#, true), (",\"\u{7}\"", true)])
  func anErrorInsideTheNotesIsTheWholeParses(inside: String, leftAsText: Bool) {
    let line = storeOpen(60_000, inside: inside)
    let lines = frame(Array((line + "\n").utf8))
    var found: JSONParseError?
    switch lines.first {
    case .openFromText(_, let text)? where leftAsText:
      #expect(!text.isWellFormed())
      if case .malformed(let error) = LineFramer.parsedWhole(text.bytes) { found = error }
    case .malformed(let error)? where !leftAsText:
      found = error
    default:
      Issue.record("framed as \(String(describing: lines.first).prefix(200))")
      return
    }
    expectTheWholeParse(of: line, failsWith: found)
  }

  @Test func anErrorAfterTheNotesReportsTheWholeParsesPlace() {
    let line = storeOpen(60_000) + "]"
    let lines = frame(Array((line + "\n").utf8))
    guard case .malformed(let framed)? = lines.first else {
      Issue.record("not refused: \(String(describing: lines.first).prefix(200))")
      return
    }
    expectTheWholeParse(of: line, failsWith: framed)
  }

  /// Expects the whole parse of `line` to fail with `found`, past the bytes read in place.
  func expectTheWholeParse(of line: String, failsWith found: JSONParseError?) {
    do {
      _ = try JSON(parsing: line)
      Issue.record("the whole parse accepted \(line.suffix(40))")
    } catch {
      #expect(found == error)
      #expect(error.position > LineFramer.discardingLength)
    }
  }
}

import JSON
import Testing

@testable import StateServer

#if canImport(Glibc)
  import Glibc
#endif

/// A line of at least `LineFramer.discardingLength` bytes (the `store/open` of a large state)
/// is parsed whole, giving its bytes back behind the parse: a plain request is still served
/// as a request, anything else as the whole parse gives it, and an error deep inside reports
/// the place the whole parse of the same bytes reports.
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

  @Test func aPlainRequestIsStillARequest() throws {
    let line = storeOpen(60_000)
    #expect(line.utf8.count > LineFramer.discardingLength)
    let lines = frame(Array((line + "\n[2]\n").utf8))
    #expect(lines.count == 3)
    guard case .request(let request)? = lines.first else {
      Issue.record("not a request: \(String(describing: lines.first).prefix(200))")
      return
    }
    #expect(request.id == 7)
    #expect(request.method == "store/open")
    #expect(request.message == (try JSON(parsing: line)))
    #expect(lines.dropFirst().first?.message == [2])
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

  @Test(arguments: [#",]"#, #",{"id":1,"id":2}"#, ",\"\u{7}\""])
  func anErrorDeepInsideReportsTheWholeParsesPlace(inside: String) {
    let line = storeOpen(60_000, inside: inside)
    let lines = frame(Array((line + "\n").utf8))
    guard case .malformed(let framed)? = lines.first else {
      Issue.record("not refused: \(String(describing: lines.first).prefix(200))")
      return
    }
    do {
      _ = try JSON(parsing: line)
      Issue.record("the whole parse accepted \(inside)")
    } catch {
      #expect(framed == error)
      #expect(framed.position > LineFramer.discardingLength)
    }
  }
}

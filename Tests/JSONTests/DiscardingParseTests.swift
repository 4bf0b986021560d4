import JSON
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A parse that gives its bytes back as it goes (`JSONParseOptions.discardsParsedBytes`, the
/// server's read of a very long line): the same value, and the same errors at the same line,
/// column and position, as a parse of the same text that keeps it, and the bytes behind the
/// parse are really gone.
@Suite("Parsing: giving the parsed bytes back")
struct DiscardingParseTests {
  /// `text` in page-aligned memory of its own, parsed giving its bytes back; `body` sees the
  /// outcome and the memory afterwards.
  func parseDiscarding(
    _ text: [UInt8], _ body: (Result<JSON, JSONParseError>, UnsafeRawBufferPointer) -> Void
  ) {
    var memory: UnsafeMutableRawPointer?
    guard posix_memalign(&memory, 1 << 16, text.count) == 0, let memory else {
      Issue.record("posix_memalign failed")
      return
    }
    defer { free(memory) }
    text.withUnsafeBytes { source in
      guard let from = source.baseAddress else { return }
      memory.copyMemory(from: from, byteCount: source.count)
    }
    let bytes = UnsafeRawBufferPointer(start: memory, count: text.count)
    let result = Result { () throws(JSONParseError) in
      try JSON(parsing: bytes, options: .discardsParsedBytes)
    }
    body(result, bytes)
  }

  func parseKeeping(_ text: [UInt8]) -> Result<JSON, JSONParseError> {
    Result { () throws(JSONParseError) in try JSON(parsing: text) }
  }

  /// About `count` notes over several lines, with characters of two and three bytes, so that
  /// the lines and columns counted for the bytes given back are tested too.
  func notes(_ count: Int) -> String {
    (0..<count).map { i in
      #"{"id":"n\#(i)","text":"é note \#(i) ✓","at":"2026-01-01T00:00:00.000Z"}"#
        + (i % 1000 == 999 ? "\n" : "")
    }.joined(separator: ",")
  }

  @Test func aLargeTextParsesToTheSameValueAndItsBytesAreGivenBack() {
    let text = Array(("[" + notes(60_000) + "]").utf8)
    #expect(text.count > 4 << 20)
    parseDiscarding(text) { result, memory in
      let value = try? result.get()
      #expect(value != nil)
      #expect(value == (try? parseKeeping(text).get()))
      #if canImport(Glibc)
        // The first megabytes were given back: they read as zeros now.
        let given = memory[(1 << 16)..<(2 << 20)]
        #expect(given.allSatisfy { $0 == 0 })
      #endif
    }
  }

  /// Errors far past the first bytes given back: the same error in every field.
  @Test(arguments: [
    ("syntax", #"{"id":"x",]"#),
    ("end", #"{"id":"x"#),
    ("invalid UTF-8", "\"\u{FF}\""),
    ("refusal", #"{"id":1,"id":2}"#),
    ("number", #"123456789012345678901234567890"#),
    ("depth", String(repeating: "[", count: 3000)),
  ])
  func anErrorDeepInsideReportsItsPlace(name: String, bad: String) {
    var text = Array(("[" + notes(60_000) + ",").utf8)
    if name == "invalid UTF-8" {
      text += [0x22, 0xC3, 0x28, 0x22]  // a two-byte sequence broken
    } else {
      text += Array(bad.utf8)
    }
    text += Array(("," + notes(1_000) + "]").utf8)
    let expected = parseKeeping(text)
    parseDiscarding(text) { result, _ in
      guard case .failure(let error) = result, case .failure(let wanted) = expected else {
        Issue.record("\(name): expected both parses to fail")
        return
      }
      #expect(error == wanted, "\(name)")
      #expect(error.position > 4 << 20, "\(name)")
    }
  }

  @Test func aNulDeepInsideIsReportedAtItsPlace() {
    let text = Array(("[" + notes(60_000) + ",\"a").utf8) + [0] + Array("\"]".utf8)
    let expected = parseKeeping(text)
    parseDiscarding(text) { result, _ in
      guard case .failure(let error) = result, case .failure(let wanted) = expected else {
        Issue.record("expected both parses to fail")
        return
      }
      #expect(error == wanted)
      #expect(error.kind == .nulByte)
    }
  }
}

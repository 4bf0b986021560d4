import JSON
import Testing

/// The string scan reads eight bytes at a time while a whole word remains: whatever ends a
/// plain run (a quote, a backslash, a control byte) or marks UTF-8 must be found at every place
/// in a word and past the last whole word, with the same value or error as anywhere else.
@Suite("Parsing: strings scanned a word at a time")
struct StringScanTests {
  /// Plain ASCII of `count` bytes.
  func plain(_ count: Int, from first: Int = 0) -> [UInt8] {
    (0..<count).map { UInt8(ascii: "a") + UInt8((first + $0) % 26) }
  }

  func parse(_ bytes: [UInt8]) -> Result<JSON, JSONParseError> {
    Result { () throws(JSONParseError) in try JSON(parsing: bytes) }
  }

  /// Each special at each of the first 20 places, followed by 0 to 11 plain bytes, inside an
  /// array with more after it (the word path reaches it) and as the whole text (it may lie
  /// past the last whole word).
  @Test(arguments: ["é", "\\n", "\\u00e9", "✓", "\u{1F600}", "\u{1}", "\u{1F}", "\u{FF}"])
  func aSpecialByteAnywhereInAWord(special: String) throws {
    let specialBytes: [UInt8] = special == "\u{FF}" ? [0xFF] : Array(special.utf8)
    let decoded: String? =
      switch special {
      case "\\n": "\n"
      case "\\u00e9": "é"
      case "\u{1}", "\u{1F}", "\u{FF}": nil
      default: special
      }
    for before in 0..<20 {
      for after in 0..<12 {
        let content = plain(before) + specialBytes + plain(after, from: before)
        let string = [0x22] + content + [0x22]
        let inArray = Array("[".utf8) + string + Array(#","tail of the array"]"#.utf8)
        for (text, wrapped) in [(string, false), (inArray, true)] {
          let result = parse(text)
          if let decoded {
            let expected =
              String(decoding: plain(before), as: UTF8.self) + decoded
              + String(decoding: plain(after, from: before), as: UTF8.self)
            let value: JSON =
              wrapped ? [.string(expected), "tail of the array"] : .string(expected)
            #expect(
              (try? result.get()) == value, "\(special) after \(before), \(after) more, \(wrapped)")
          } else {
            let kind: JSONParseError.Kind = special == "\u{FF}" ? .invalidUTF8 : .syntax
            guard case .failure(let error) = result else {
              Issue.record("\(special) after \(before) accepted")
              continue
            }
            #expect(error.kind == kind, "\(special) after \(before), \(after) more")
            // The place is the bad byte's, wherever in a word it was.
            let badOffset = (wrapped ? 1 : 0) + 1 + before
            #expect(error.position >= badOffset, "\(special) after \(before)")
          }
        }
      }
    }
  }

  /// Plain strings of every length up to three words end exactly at their quote.
  @Test func plainStringsOfEveryLength() throws {
    for count in 0..<25 {
      let content = plain(count)
      let text = Array("[".utf8) + [0x22] + content + [0x22] + Array(",1]".utf8)
      #expect(try JSON(parsing: text) == [.string(String(decoding: content, as: UTF8.self)), 1])
    }
  }
}

import JSON
import Testing

@Suite("Parsing: JSON(parsing:)")
struct ParsingTests {
  /// The error thrown for `text`, or `nil` when it parses.
  func failure(_ bytes: [UInt8], _ options: JSONParseOptions = []) -> JSONParseError? {
    do {
      _ = try JSON(parsing: bytes, options: options)
      return nil
    } catch {
      return error
    }
  }

  func failure(_ text: String) -> JSONParseError? { failure(Array(text.utf8)) }

  @Test func parsesEveryKindOfValue() throws {
    let value = try JSON(
      parsing:
        #"{"n":null,"t":true,"f":false,"i":-42,"d":19.99,"s":"Zoë \ud83d\ude00","a":[1,[]],"o":{}}"#
    )
    #expect(
      value == [
        "n": nil, "t": true, "f": false, "i": -42, "d": 19.99, "s": "Zoë 😀", "a": [1, []], "o": [:],
      ])
    #expect(value.objectValue?.keys == ["n", "t", "f", "i", "d", "s", "a", "o"])
  }

  @Test func topLevelScalarsParse() throws {
    #expect(try JSON(parsing: "42") == 42)
    #expect(try JSON(parsing: " \"x\" ") == "x")
    #expect(try JSON(parsing: "null") == nil)
  }

  @Test func keysKeepTheirOrderPastTheIndexThreshold() throws {
    let keys = (0..<20).map { "k\(19 - $0)" }
    let text = "{" + keys.map { "\"\($0)\":1" }.joined(separator: ",") + "}"
    let object = try #require(try JSON(parsing: text).objectValue)
    #expect(object.keys == keys)
    #expect(object["k3"] == 1)
  }

  @Test func nulEscapeInsideStringsSurvives() throws {
    let value = try JSON(parsing: #"["a\u0000b"]"#)
    #expect(value == ["a\u{0}b"])
    #expect(value[0]?.stringValue?.utf8.count == 3)
  }

  @Test(
    "a raw NUL byte is an error wherever it is (jansson drops it after a token)",
    arguments: [
      [0x31, 0x32, 0x33, 0x00], [0x5B, 0x31, 0x00, 0x5D], [0x74, 0x72, 0x75, 0x65, 0x00],
      [0x22, 0x61, 0x00, 0x22], [0x00], [0x5B, 0x0A, 0x20, 0x00, 0x5D],
    ] as [[UInt8]])
  func rawNulIsRejected(_ bytes: [UInt8]) throws {
    let error = try #require(failure(bytes))
    #expect(error.kind == .nulByte)
    let offset = try #require(bytes.firstIndex(of: 0))
    #expect(error.position == offset + 1)
  }

  @Test func rawNulReportsItsLineAndColumn() throws {
    let error = try #require(failure([0x5B, 0x0A, 0x20, 0xC3, 0xA9, 0x00, 0x5D]))
    #expect(error.line == 2)
    #expect(error.column == 3)  // " ", "é", then the NUL
  }

  @Test func duplicateKeysAreTheirOwnKind() throws {
    let error = try #require(failure(#"{"a":1,"b":{"c":1,"c":2}}"#))
    #expect(error.kind == .duplicateKey)
    #expect(error.reason.contains("\"c\""))
  }

  @Test func allowDuplicateKeysKeepsTheLastValueAtTheFirstPosition() throws {
    let value = try JSON(
      parsing: #"{"op":"add","x":1,"op":"remove"}"#, options: .allowDuplicateKeys)
    #expect(value.objectValue?.keys == ["op", "x"])
    #expect(value["op"] == "remove")
  }

  @Test func int64ExtremesAreExact() throws {
    #expect(
      try JSON(parsing: "[9223372036854775807,-9223372036854775808]") == [
        .integer(.max), .integer(.min),
      ])
  }

  @Test(
    "integers outside Int64 are out of range",
    arguments: ["9223372036854775808", "-9223372036854775809", "[1e400]"])
  func numbersOutOfRange(_ text: String) throws {
    let error = try #require(failure(text))
    #expect(error.kind == .numberOutOfRange)
  }

  @Test func nestingUpToTheLimitParsesAndOneMoreIsTooDeep() throws {
    let limit = JSON.maximumDepth
    let deepest = String(repeating: "[", count: limit) + String(repeating: "]", count: limit)
    var value = try JSON(parsing: deepest)
    var depth = 0
    while case .array(let elements) = value {
      depth += 1
      value = elements.first ?? .null
    }
    #expect(depth == limit)
    let error = try #require(failure("[" + deepest + "]"))
    #expect(error.kind == .tooDeep)
    #expect(error.position == limit + 1)
  }

  @Test func hundredThousandOpeningBracketsFailFast() throws {
    #expect(failure(String(repeating: "[", count: 100_000))?.kind == .tooDeep)
  }

  @Test func invalidUTF8() throws {
    let error = try #require(failure([0x5B, 0x22, 0xFF, 0x22, 0x5D]))
    #expect(error.kind == .invalidUTF8)
    #expect(error.reason.contains("0xff"))
  }

  @Test func loneSurrogateEscape() throws {
    let error = try #require(failure(#"["\ud800"]"#))
    #expect(error.kind == .syntax)
    #expect(error.reason.contains("\\uD800"))
  }

  @Test func byteOrderMarkIsRejectedWithAReason() throws {
    let error = try #require(failure([0xEF, 0xBB, 0xBF, 0x7B, 0x7D]))
    #expect(error.kind == .syntax)
    #expect(error.reason.contains("byte order mark"))
  }

  @Test func syntaxErrorsAreLocated() throws {
    #expect(
      failure("[1,\n  x]")
        == JSONParseError(
          kind: .syntax, line: 2, column: 3, position: 7, reason: "invalid token near 'x'"))
    #expect(failure("[1] x")?.kind == .syntax)
    #expect(failure("[1,")?.kind == .unexpectedEnd)
    #expect(failure("")?.kind == .unexpectedEnd)
    #expect(failure("   ")?.kind == .unexpectedEnd)
  }

  @Test func theThreeEntryPointsAgree() throws {
    let text = #"{"id":7,"params":["x"]}"#
    let bytes = Array(text.utf8)
    let fromRaw = try bytes.withUnsafeBytes { try JSON(parsing: $0) }
    #expect(try JSON(parsing: text) == fromRaw)
    #expect(try JSON(parsing: bytes) == fromRaw)
  }
}

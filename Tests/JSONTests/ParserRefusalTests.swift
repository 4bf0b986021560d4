import Testing

@testable import JSON

/// Members of well-formed text that cannot be held are refused at their pointer, and the parse
/// goes on: the rest of the value (a request's id) stays readable.
@Suite("Parsing: refused members are located, the rest is kept")
struct ParserRefusalTests {
  func parse(_ text: String) throws(JSONParseError) -> (JSON, [JSONPointer]) {
    var text = text
    let result = text.withUTF8 { utf8 in
      Result { () throws(JSONParseError) in
        guard var parser = JSONParser(UnsafeRawBufferPointer(utf8), allowDuplicateKeys: false)
        else { throw JSONParseError(.unexpectedEnd, "empty", position: 0, in: .init(utf8)) }
        let value = try parser.parseText()
        return (value, parser.refusals)
      }
    }
    let (value, refusals) = try result.get()
    return (value, refusals.map(\.member.pointer))
  }

  func failure(_ text: String) -> JSONParseError? {
    do {
      _ = try JSON(parsing: text)
      return nil
    } catch {
      return error
    }
  }

  @Test func aDuplicateKeyDeepInsideKeepsTheIdReadable() throws {
    let error = try #require(
      failure(#"{"jsonrpc":"2.0","id":7,"params":{"action":{"a":1,"a":2}},"method":"dispatch"}"#))
    #expect(error.kind == .duplicateKey)
    #expect(error.refusals.map(\.pointer) == [JSONPointer(tokens: ["params", "action", "a"])])
    #expect(error.remainder?["id"] == 7)
    #expect(error.remainder?["method"] == "dispatch")
    #expect(error.remainder?["params"]?["action"]?["a"] == .null)
    #expect(error.reason.contains("\"a\""))
  }

  @Test(
    "numbers beyond Int64 or Double are refused at their pointer",
    arguments: [
      "9223372036854775808", "-9223372036854775809", "1e400", "-1e400",
      "123456789012345678901234567890",
    ])
  func numbersOutOfRange(_ number: String) throws {
    let error = try #require(failure(#"{"id":"x","params":{"list":[0,\#(number)]}}"#))
    #expect(error.kind == .numberOutOfRange)
    #expect(error.refusals.map(\.pointer) == [JSONPointer(tokens: ["params", "list", "1"])])
    #expect(error.remainder?["id"] == "x")
    #expect(error.reason.contains(number))
  }

  @Test func everyRefusalIsListedInTextOrder() throws {
    let (value, refused) = try parse(#"[{"a":1,"a":2},1e999,{"b":{"c":0,"c":1}}]"#)
    #expect(
      refused == [
        JSONPointer(tokens: ["0", "a"]), JSONPointer(tokens: ["1"]),
        JSONPointer(tokens: ["2", "b", "c"]),
      ])
    #expect(value == [["a": .null], .null, ["b": ["c": .null]]])
  }

  @Test func tinyNumbersUnderflowToZeroAsJanssonDoes() throws {
    #expect(try JSON(parsing: #"{"a\u0000":1e-400}"#) == ["a\u{0}": 0.0])
  }

  @Test func syntaxAfterARefusalIsStillAnError() throws {
    let error = try #require(failure(#"{"a":1,"a":2,}"#))
    #expect(error.kind == .syntax)
    #expect(error.remainder == nil)
    #expect(error.position == 14)
  }

  @Test func aNulByteIsNeverRecovered() throws {
    let error = try #require(failure("{\"a\":1,\"a\":2}\u{0}"))
    #expect(error.kind == .nulByte)
  }

  @Test func nestingIsLimitedAsJanssonLimitsIt() throws {
    let limit = JSON.maximumDepth
    let inner = #"{"a":1,"a":2}"#
    let deepest =
      String(repeating: "[", count: limit - 2) + inner + String(repeating: "]", count: limit - 2)
    #expect(failure(deepest)?.refusals.count == 1)
    let tooDeep = "[" + deepest + "]"
    #expect(failure(tooDeep)?.kind == .tooDeep)
  }

  @Test func keysAreComparedByTheirBytesNotByCanonicalEquivalence() throws {
    // "é" precomposed and "e" + U+0301 are distinct keys to jansson; a 1.5 million-line fuzz run
    // (seed 20261201) found them refused as a repeated key here.
    let (value, refused) = try parse(#"{"\u00e9":1,"e\u0301":2,"n":1e400}"#)
    #expect(refused == [JSONPointer(tokens: ["n"])])
    #expect(value.objectValue?.count == 3)
  }
}

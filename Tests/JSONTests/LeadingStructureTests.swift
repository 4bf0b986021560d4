import JSON
import Testing

private let suiteFolder = "json-test-suite/test_parsing"

/// `JSON.parsingLeadingStructure`, the parse of a value a caller frames itself (the server's
/// request envelope): whatever it returns must be what the whole parse gives for the same bytes.
@Suite("The leading structure of a text", .enabled(if: TestData.shouldRun(suiteFolder)))
struct LeadingStructureTests {
  /// The same value with its members in the same order (`==` ignores the order of keys).
  static func identical(_ a: JSON, _ b: JSON) -> Bool {
    a == b && (try? a.serialized()) == (try? b.serialized())
  }

  static func leading(_ bytes: [UInt8], levelsAbove: Int = 0) -> (value: JSON, count: Int)? {
    bytes.withUnsafeBytes { JSON.parsingLeadingStructure($0, levelsAbove: levelsAbove) }
  }

  @Test(
    "every JSONTestSuite file: the value read is the whole parse of the bytes it took",
    arguments: TestData.fileNames(in: suiteFolder))
  func agreesWithTheWholeParse(_ name: String) throws {
    let bytes = try TestData.bytes(suiteFolder, name)
    // Nothing read is fine (the caller parses the whole text); how often it reads is below.
    guard let (value, count) = Self.leading(bytes) else { return }
    #expect((1...bytes.count).contains(count))
    let whole = try JSON(parsing: Array(bytes[..<count]))
    #expect(Self.identical(value, whole), "\(name)")
    // With only whitespace after it, the value is the file's.
    if bytes[count...].allSatisfy({ [0x20, 0x09, 0x0A, 0x0D].contains($0) }) {
      #expect(Self.identical(value, try JSON(parsing: bytes)), "\(name)")
    }
  }

  @Test("it reads the suite's valid objects and arrays, all but repeated keys")
  func readsValidStructures() throws {
    var read: [String] = []
    var left: [String] = []
    for name in TestData.fileNames(in: suiteFolder) where name.hasPrefix("y_") {
      let bytes = try TestData.bytes(suiteFolder, name)
      guard bytes.first == UInt8(ascii: "{") || bytes.first == UInt8(ascii: "[") else { continue }
      if Self.leading(bytes) == nil { left.append(name) } else { read.append(name) }
    }
    #expect(read.count > 60)
    // A repeated key is refused here and reported by the whole parse.
    #expect(
      left == [
        "y_object_duplicated_key.json", "y_object_duplicated_key_and_value.json",
      ])
  }

  @Test func aLargeValueIsReadOnceNotLeftToTheWholeParse() throws {
    // A `store/open` carries its whole state here: refusing it for its length would parse
    // the state again in the whole parse.
    let large = "[" + (0..<100_000).map { #"{"id":\#($0)}"# }.joined(separator: ",") + "]"
    let bytes = Array(large.utf8)
    let read = try #require(Self.leading(bytes + Array(",\"tail\":1}".utf8), levelsAbove: 2))
    #expect(read.count == bytes.count)
    #expect(read.value.arrayValue?.count == 100_000)
  }

  @Test("it stops at the closing bracket and says how far it read")
  func stopsAtTheClosingBracket() throws {
    let text = Array(#"{"a":[1,{"b":"}"}]} ,"rest":1}"#.utf8)
    let (value, count) = try #require(Self.leading(text))
    #expect(count == 19)
    #expect(Self.identical(value, try JSON(parsing: #"{"a":[1,{"b":"}"}]}"#)))
  }

  @Test("what the whole parse refuses or reports is left to it")
  func leavesRefusalsToTheWholeParse() {
    for text in [
      #"{"a":1,"a":2}"#, "[1,2", "[12345678901234567890]", "[1e999]", "5", #""text""#, " [1]",
      "[\u{0}]", "[1\u{0}]", "[true\u{0}]", "[\"\u{1}\"]",
    ] {
      #expect(Self.leading(Array(text.utf8)) == nil, "\(text.debugDescription)")
    }
  }

  @Test("a value that might nest past the limit inside the levels around it is left too")
  func leavesDeepValuesToTheWholeParse() throws {
    let deep = String(repeating: "[", count: 2048) + String(repeating: "]", count: 2048)
    // Alone it parses (2048 levels, the most); one level down it would be one too many.
    #expect(throws: Never.self) { try JSON(parsing: deep) }
    #expect(throws: JSONParseError.self) { try JSON(parsing: "[" + deep + "]") }
    #expect(Self.leading(Array(deep.utf8), levelsAbove: 1) == nil)
    // A short one is read whatever the levels above.
    let shallow = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
    #expect(Self.leading(Array(shallow.utf8), levelsAbove: 1)?.count == 200)
  }
}

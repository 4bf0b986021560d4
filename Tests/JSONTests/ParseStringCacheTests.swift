import JSON
import Testing

/// Short strings come from a per-thread table of those met before (JSONStringCache): whatever
/// the table holds, each string must be exactly its own bytes.
@Suite("Parsing: the short-string table")
struct ParseStringCacheTests {
  /// Strings of every length around the table's 15-byte limit and the long values' table's
  /// 16 to 32 bytes, differing in one byte, in length alone (a trailing `\u0000`) or in a
  /// multi-byte character.
  static let strings: [String] = {
    var strings: [String] = []
    for length in 0...34 {
      let base = String((0..<length).map { Character(Unicode.Scalar(UInt8(97 + $0 % 26))) })
      strings.append(base)
      strings.append(base + "\u{0}")
      if length > 0 { strings.append(String(base.dropLast()) + "Z") }
      strings.append(base + "é")
      strings.append("é" + base)
    }
    return strings
  }()

  func quoted(_ string: String) throws -> String {
    String(decoding: try JSON.string(string).serialized(), as: UTF8.self)
  }

  /// `[s0, {s0: 0}, s1, {s1: 1}, ...]`: each string as a value and as a key.
  func parse(_ strings: [String]) throws -> JSON {
    let elements = try strings.enumerated().map { offset, string in
      let text = try quoted(string)
      return "\(text),{\(text):\(offset)}"
    }
    return try JSON(parsing: "[" + elements.joined(separator: ",") + "]")
  }

  func expected(_ strings: [String]) -> JSON {
    .array(
      strings.enumerated().flatMap { offset, string in
        [.string(string), .object(JSONObject([(string, .integer(Int64(offset)))]))]
      })
  }

  @Test func stringsAndKeysAreTheirOwnBytesWhenSeenAgain() throws {
    let strings = Self.strings
    for _ in 0..<3 { #expect(try parse(strings) == expected(strings)) }
    #expect(try parse(strings.reversed()) == expected(strings.reversed()))
  }

  @Test func moreDistinctStringsThanSlotsStillReadBack() throws {
    // Far more short strings than the table has slots: every lookup either hits its own
    // string or misses and decodes.
    let strings = (0..<2_000).map { "k\($0 * 7919 % 100_000)" }
    #expect(try parse(strings) == expected(strings))
    #expect(try parse(strings.shuffled()).arrayValue?.count == 2 * strings.count)
  }

  @Test func longValuesDifferingInOneByteAnywhereReadBack() throws {
    // The long values' table compares four overlapping words: a change in any byte, and a
    // change of length alone, must be seen.
    var strings: [String] = []
    for length in 16...33 {
      let base = String(repeating: "2026-01-01T00:00:00.000Z-x", count: 2).prefix(length)
      strings.append(String(base))
      for position in 0..<length {
        var bytes = Array(base.utf8)
        bytes[position] = UInt8(ascii: "#")
        strings.append(String(decoding: bytes, as: UTF8.self))
      }
    }
    for _ in 0..<2 { #expect(try parse(strings) == expected(strings)) }
    // Repeated values share one box, and still read back as themselves.
    let repeated = Array(repeating: "2026-01-01T00:00:00.000Z", count: 50) + strings
    #expect(try parse(repeated) == expected(repeated))
  }
}

import JSON
import Testing

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// A date in the form the encoder writes (`YYYY-MM-DDThh:mm:ss.sssZ`) is read at fixed positions
/// (ISO8601Date.swift, `canonicalDate`); any other form goes through the general reading. Both
/// must give the same dates and refuse the same texts.
@Suite("Codable bridge: dates in the form the encoder writes")
struct CanonicalDateTests {
  func date(_ text: String) throws -> Date {
    try JSONValueDecoder().decode(Date.self, from: .string(text))
  }

  /// The encoder's text of `date`, the fixed-width form.
  func canonical(_ date: Date) throws -> String {
    guard case .string(let text) = try JSONValueEncoder().encode(date) else {
      Issue.record("a date encodes as a string")
      return ""
    }
    return text
  }

  @Test func canonicalTextsReadAsTheGeneralReadingReadsThem() throws {
    // Whole milliseconds from year 1 to year 9999, spread by a fixed linear congruential
    // sequence (the same every run).
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    let first: Int64 = -62_135_596_800_000
    let span = UInt64(253_402_300_799_999 - first)
    for _ in 0..<3_000 {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      let milliseconds = first + Int64((state >> 11) % span)
      let written = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
      let text = try canonical(written)
      #expect(text.utf8.count == 24)
      // Four fraction digits and an offset are not the fixed form: the general reading's.
      let longer = text.dropLast() + "0Z"
      let offset = text.dropLast() + "+00:00"
      let read = try date(text)
      #expect(read == written, "\(text)")
      #expect(try date(String(longer)) == read, "\(longer)")
      #expect(try date(String(offset)) == read, "\(offset)")
    }
  }

  @Test func aLeapDayAndTheLowercaseFormRead() throws {
    let leap = try date("2024-02-29T12:34:56.789Z")
    #expect(leap.timeIntervalSince1970 == 1_709_210_096.789)
    #expect(try date("2024-02-29t12:34:56.789z") == leap)
  }

  @Test(arguments: [
    "2026-02-29T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-00-10T00:00:00.000Z",
    "2026-01-32T00:00:00.000Z", "2026-01-00T00:00:00.000Z", "2026-01-01T24:00:00.000Z",
    "2026-01-01T00:60:00.000Z", "2026-01-01T00:00:60.000Z", "2026-01-01T00:00:00.0a0Z",
    "2026-01-01 00:00:00.000Z", "+026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000X",
    "2026/01-01T00:00:00.000Z", "2026-01-01T00-00:00.000Z", "2026-01-01T00:00:00,000Z",
  ])
  func textsOfTheFixedLengthThatAreNoDateAreRefusedAlike(text: String) throws {
    #expect(text.utf8.count == 24)
    let wanted = #expect(throws: JSONDecodingError.self) { try date("not a date") }
    let error = #expect(throws: JSONDecodingError.self) { try date(text) }
    #expect(error?.pointer == wanted?.pointer)
    #expect(error?.reason == wanted?.reason)
  }
}

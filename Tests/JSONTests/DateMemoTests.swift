import JSON
import Testing

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Dates written again come from a thread's memo of the last ones (EncodedDates), and dates
/// read repeat and alternate as a state's do: whatever the memo holds and whichever reading
/// (the fixed form's or the general one) read the last date, each date must be exactly its own.
@Suite("Codable bridge: repeated dates")
struct DateMemoTests {
  let texts = [
    "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z", "2027-05-06T07:08:09.250Z",
    "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00Z", "2026-01-01T01:00:00+01:00",
    "1970-01-01T00:00:00.000Z", "2027-05-06T07:08:09.250Z",
  ]

  @Test func repeatedAndAlternatingDatesDecodeToTheirOwnValues() throws {
    let json = JSON.array(texts.map { .string($0) })
    let dates = try JSONValueDecoder().decode([Date].self, from: json)
    let seconds = dates.map(\.timeIntervalSince1970)
    #expect(
      seconds == [
        1_767_225_600, 1_767_225_600, 1_809_587_289.25, 1_767_225_600,
        1_767_225_600, 1_767_225_600, 0, 1_809_587_289.25,
      ])
  }

  @Test func aBadDateAfterAGoodOneIsStillRefused() {
    let json: JSON = ["2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Zx"]
    #expect(throws: JSONDecodingError.self) {
      try JSONValueDecoder().decode([Date].self, from: json)
    }
  }

  @Test func repeatedDatesEncodeToTheirOwnText() throws {
    let dates = [0, 1_767_225_600, 1_767_225_600, 1_809_587_289.25, 0, 1_767_225_600].map {
      Date(timeIntervalSince1970: $0)
    }
    let encoded = try JSONValueEncoder().encode(dates)
    #expect(
      encoded == [
        "1970-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z",
        "2027-05-06T07:08:09.250Z", "1970-01-01T00:00:00.000Z", "2026-01-01T00:00:00.000Z",
      ])
  }
}

import JSON
import Testing

/// `JSONValueDecoder(refusesUnknownKeys: true)`: a member the type does not read is an error at
/// its pointer (the server decodes actions this way, as their schemas allow no other member).
@Suite("Decoding: unknown members refused when asked")
struct StrictDecodingTests {
  struct Inner: Codable, Equatable {
    var x: Int
  }

  struct Outer: Codable, Equatable {
    var a: Int
    var b: String?
    var inner: Inner?
    var tags: [String: Int]?
    var payload: JSON?
  }

  let strict = JSONValueDecoder(refusesUnknownKeys: true)

  func failure(_ json: JSON) -> JSONDecodingError? {
    do {
      _ = try strict.decode(Outer.self, from: json)
      return nil
    } catch {
      return error
    }
  }

  @Test func anUnknownMemberIsRefusedAtItsPointerNamingTheKnownOnes() throws {
    let error = try #require(failure(["a": 1, "c": 2]))
    #expect(error.pointer == "/c")
    #expect(error.reason.contains("unknown field \"c\""))
    #expect(error.reason.contains("\"a\"") && error.reason.contains("\"b\""))
    // The lenient default (snapshots of older versions must load) still ignores it.
    #expect(try JSONValueDecoder().decode(Outer.self, from: ["a": 1, "c": 2]) == Outer(a: 1))
  }

  @Test func nestedObjectsAreCheckedToo() throws {
    #expect(failure(["a": 1, "inner": ["x": 1, "y": 2]])?.pointer == "/inner/y")
    #expect(failure(["a": 1, "inner": ["x": 1]]) == nil)
  }

  @Test func dictionariesAndJSONValuesTakeAnyMember() throws {
    #expect(failure(["a": 1, "tags": ["any": 1, "other": 2], "payload": ["free": [1]]]) == nil)
  }

  @Test func optionalMembersAbsentOrNullAreFine() throws {
    #expect(failure(["a": 1, "b": .null]) == nil)
    #expect(failure(["a": 1]) == nil)
  }

  @Test func aStrictDecodeLeavesNothingBehind() throws {
    // The ledger of asked keys once held its decoders and they held it: every strictly decoded
    // action leaked (found by bench/soak). The decoder given to a type must be gone afterwards.
    let value = try strict.decode(Witnessed.self, from: ["a": 1])
    #expect(value.decoder == nil)
    let lenient = try JSONValueDecoder().decode(Witnessed.self, from: ["a": 1])
    #expect(lenient.decoder == nil)
  }
}

/// A value that keeps, weakly, the decoder it was decoded with.
struct Witnessed: Decodable {
  enum Keys: String, CodingKey { case a }

  weak var decoder: AnyObject?

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Keys.self)
    _ = try container.decode(Int.self, forKey: .a)
    self.decoder = decoder as AnyObject
  }
}

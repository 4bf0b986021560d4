import JSON
import Testing

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The decoder of an element or a member is reused for the next one when nothing else holds it
/// (JSONValueDecoder.swift, `child(of:key:)` and `park(_:)`), and the members a consuming decode
/// took out are kept in bits (`takenMask`). Neither may show: a type that keeps its decoder or a
/// container keeps its own, errors name the same pointers, and a member read twice is still
/// refused at any position.
@Suite("Decoding: reused child decoders")
struct ChildDecoderReuseTests {
  func decode<T: Decodable>(_ type: T.Type, _ json: JSON, consuming: Bool) throws -> T {
    consuming
      ? try JSONValueDecoder().decode(T.self, consuming: json)
      : try JSONValueDecoder().decode(T.self, from: json)
  }

  /// Keeps its decoder, as a type may.
  struct KeepsDecoder: Decodable {
    let decoder: any Decoder
    let number: Int
    init(from decoder: any Decoder) throws {
      self.decoder = decoder
      number = try decoder.singleValueContainer().decode(Int.self)
    }
  }

  @Test(arguments: [false, true])
  func aKeptDecoderKeepsItsPathAndItsValue(consuming: Bool) throws {
    let kept = try decode([KeepsDecoder].self, [10, 20, 30], consuming: consuming)
    #expect(kept.map(\.number) == [10, 20, 30])
    for (index, element) in kept.enumerated() {
      #expect(element.decoder.codingPath.map(\.intValue) == [index])
      #expect(try element.decoder.singleValueContainer().decode(Int.self) == element.number)
    }
  }

  /// Keeps a container of its decoder.
  struct KeepsContainer: Decodable {
    enum CodingKeys: String, CodingKey { case name }
    let container: KeyedDecodingContainer<CodingKeys>
    let name: String
    init(from decoder: any Decoder) throws {
      container = try decoder.container(keyedBy: CodingKeys.self)
      name = try container.decode(String.self, forKey: .name)
    }
  }

  @Test(arguments: [false, true])
  func aKeptContainerKeepsItsObject(consuming: Bool) throws {
    let json: JSON = [["name": "a"], ["name": "b"], ["name": "c"]]
    let kept = try decode([KeepsContainer].self, json, consuming: consuming)
    #expect(kept.map(\.name) == ["a", "b", "c"])
    for (index, element) in kept.enumerated() {
      #expect(element.container.codingPath.map(\.intValue) == [index])
      #expect(try element.container.decode(String.self, forKey: .name) == element.name)
    }
  }

  struct Part: Codable, Equatable {
    enum Kind: String, Codable { case bolt, nut }
    var kind: Kind
    var made: Date
    var size: Int?
  }

  struct Box: Codable, Equatable {
    var label: String
    var parts: [Part]
    var spare: Part?
  }

  func boxes(_ count: Int) -> JSON {
    .array(
      (0..<count).map { i in
        [
          "label": .string("box \(i)"),
          "parts": [
            ["kind": "bolt", "made": "2026-01-01T00:00:00.000Z", "size": .integer(Int64(i))],
            ["kind": "nut", "made": "2026-01-02T00:00:00.500Z"],
          ],
          "spare": i % 2 == 0 ? ["kind": "nut", "made": "2026-01-03T00:00:00Z"] : nil,
        ]
      })
  }

  @Test func nestedElementsOfSeveralTypesDecodeAsBefore() throws {
    let borrowed = try decode([Box].self, boxes(40), consuming: false)
    let consumed = try decode([Box].self, boxes(40), consuming: true)
    #expect(consumed == borrowed)
    #expect(borrowed[7].parts[0].size == 7)
    #expect(borrowed[8].spare?.kind == .nut)
    #expect(borrowed[9].spare == nil)
    #expect(borrowed[3].parts[1].made.timeIntervalSince1970 == 1_767_312_000.5)
  }

  @Test(arguments: [
    ("/12/parts/1/kind", JSON.string("washer")),
    ("/0/parts/0/made", JSON.string("yesterday")),
    ("/38/spare/size", JSON.string("big")),
    ("/20/label", JSON.integer(3)),
  ])
  func anErrorAfterReusedDecodersNamesItsElement(pointer: String, bad: JSON) throws {
    let tokens = pointer.split(separator: "/").map(String.init)
    for consuming in [false, true] {
      let json = ConsumingDecodeTests().replacing(boxes(40), tokens[...], with: bad)
      let error = #expect(throws: JSONDecodingError.self) {
        try decode([Box].self, json, consuming: consuming)
      }
      #expect(error?.pointer == pointer)
    }
    let json = ConsumingDecodeTests().replacing(boxes(40), tokens[...], with: bad)
    let borrowed = #expect(throws: JSONDecodingError.self) {
      try decode([Box].self, json, consuming: false)
    }
    let consumed = #expect(throws: JSONDecodingError.self) {
      try decode([Box].self, json, consuming: true)
    }
    #expect(consumed?.reason == borrowed?.reason)
  }

  struct Name: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  /// Reads the array members its member `reads` names, in order, from an object of many.
  struct Reads: Decodable {
    var lists: [[Int]]
    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: Name.self)
      let names = try container.decode([String].self, forKey: Name(stringValue: "reads"))
      lists = try names.map { try container.decode([Int].self, forKey: Name(stringValue: $0)) }
    }
  }

  func manyMembers(reading names: [String]) -> JSON {
    let lists = (0..<70).map { ("m\($0)", JSON.array([.integer(Int64($0))])) }
    return .object(JSONObject([("reads", JSON.array(names.map { .string($0) }))] + lists))
  }

  @Test func membersAtAnyPositionAreTakenOnceAndRefusedTwice() throws {
    let names = ["m66", "m2", "m61", "m62", "m69", "m0"]
    let once = try JSONValueDecoder().decode(Reads.self, consuming: manyMembers(reading: names))
    #expect(once.lists == [[66], [2], [61], [62], [69], [0]])
    for twice in [["m66", "m66"], ["m5", "m5"], ["m61", "m61"], ["m62", "m64", "m62"]] {
      let error = #expect(throws: JSONDecodingError.self) {
        try JSONValueDecoder().decode(Reads.self, consuming: manyMembers(reading: twice))
      }
      #expect(error?.pointer == "/" + twice[0])
      #expect(error?.reason.contains("already read once") == true)
      // Borrowed, nothing is taken: a second read gives the same list.
      let borrowed = try JSONValueDecoder().decode(Reads.self, from: manyMembers(reading: twice))
      #expect(borrowed.lists.first == borrowed.lists.last)
    }
  }

  /// A strict decode reports an unknown member at the end, through the decoder of its object:
  /// decoders of objects and their parents must keep their paths however many elements and
  /// raw values were decoded after them.
  @Test func aStrictDecodeNamesAnUnknownMemberOfALaterElement() throws {
    let strict = JSONValueDecoder(refusesUnknownKeys: true)
    var parts: [JSON] = (0..<6).map { i in
      ["kind": i % 2 == 0 ? "bolt" : "nut", "made": "2026-01-01T00:00:00.000Z"]
    }
    parts[4] = ["kind": "nut", "made": "2026-01-01T00:00:00.000Z", "colour": "red"]
    let json: JSON = [
      ["label": "first", "parts": .array(parts)],
      ["label": "second", "parts": .array(Array(parts.prefix(2)))],
    ]
    let lists: JSON = [.array(parts), .array(Array(parts.prefix(2)))]
    let error = #expect(throws: JSONDecodingError.self) {
      try strict.decode([[Part]].self, from: lists)
    }
    #expect(error?.pointer == "/0/4/colour")
    let boxed = #expect(throws: JSONDecodingError.self) {
      try strict.decode([Box].self, from: json)
    }
    #expect(boxed?.pointer == "/0/parts/4/colour")
  }
}

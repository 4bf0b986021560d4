import Foundation
import JSON
import Testing

private struct Item: Codable, Equatable {
  var id: String
  var quantity: Int
  var price: Double
  var tags: [String]
  var note: String?
}

private enum Status: String, Codable, Equatable { case open, closed }

private enum Action: Codable, Equatable {
  case increment
  case setQuantity(id: String, quantity: Int)
  case rename(String)
  case replace(items: [Item], status: Status?)
}

private struct Cart: Codable, Equatable {
  var items: [Item]
  var status: Status
  var coupon: String?
  var createdAt: Date
  var lastAction: Action?
  var extra: JSON
  var counts: [String: Int]
}

/// Refuses negative quantities in `init(from:)`, as a feature's action validation would.
private struct Quantity: Decodable, Equatable {
  var value: Int
  struct Negative: Error, CustomStringConvertible {
    var description: String { "a quantity cannot be negative" }
  }
  init(from decoder: any Decoder) throws {
    value = try decoder.singleValueContainer().decode(Int.self)
    if value < 0 { throw Negative() }
  }
}

private struct Order: Decodable, Equatable {
  var lines: [Line]
  struct Line: Decodable, Equatable { var quantity: Quantity }
}

@Suite("Codable bridge: JSONValueEncoder / JSONValueDecoder")
struct CodableBridgeTests {
  let encoder = JSONValueEncoder()
  let decoder = JSONValueDecoder()

  func decodingError<T: Decodable>(_ type: T.Type, _ json: JSON) -> JSONDecodingError? {
    do {
      let value = try decoder.decode(type, from: json)
      Issue.record("decoded \(value)")
      return nil
    } catch {
      return error
    }
  }

  static let date = Date(timeIntervalSince1970: 1_795_974_399)  // 2026-11-29T17:46:39Z

  fileprivate var cart: Cart {
    Cart(
      items: [
        Item(id: "sku-7", quantity: 2, price: 19.99, tags: ["a", "ü"], note: nil),
        Item(id: "sku-\u{0}8", quantity: -1, price: 0.1, tags: [], note: "gift"),
      ],
      status: .open, coupon: nil, createdAt: Self.date,
      lastAction: .replace(items: [], status: .closed), extra: ["free": [1, "form", nil]],
      counts: ["x": 1])
  }

  @Test func nestedStructsRoundTripInDeclarationOrder() throws {
    let json = try encoder.encode(cart)
    #expect(
      json.objectValue?.keys == [
        "items", "status", "coupon", "createdAt", "lastAction", "extra", "counts",
      ])
    #expect(json["coupon"] == .null)
    #expect(json["items"]?[0]?.objectValue?.keys == ["id", "quantity", "price", "tags", "note"])
    #expect(json["createdAt"] == "2026-11-29T17:46:39.000Z")
    #expect(json["extra"] == ["free": [1, "form", nil]])
    #expect(try decoder.decode(Cart.self, from: json) == cart)
    let text = try json.serialized()
    #expect(try decoder.decode(Cart.self, from: JSON(parsing: text)) == cart)
  }

  @Test func enumsWithAssociatedValuesUseSwiftsShape() throws {
    let actions: [Action] = [
      .increment, .setQuantity(id: "sku-7", quantity: 3), .rename("x"),
      .replace(items: [Item(id: "a", quantity: 1, price: 2.5, tags: [], note: nil)], status: nil),
    ]
    let json = try encoder.encode(actions)
    #expect(json[0] == ["increment": [:]])
    #expect(json[1] == ["setQuantity": ["id": "sku-7", "quantity": 3]])
    #expect(json[2] == ["rename": ["_0": "x"]])
    #expect(try decoder.decode([Action].self, from: json) == actions)
  }

  /// A published state keeps one shape: an absent optional is written `null`, not left out
  /// (NullWritingKeyedContainer), and both `null` and a missing key read back as `nil`.
  @Test func optionalsAreWrittenAsNullAndReadFromMissingOrNull() throws {
    let item = Item(id: "a", quantity: 1, price: 1, tags: [], note: nil)
    #expect(try encoder.encode(item)["note"] == .null)
    let withNull: JSON = ["id": "a", "quantity": 1, "price": 1, "tags": [], "note": nil]
    #expect(try decoder.decode(Item.self, from: withNull) == item)
    let missing: JSON = ["id": "a", "quantity": 1, "price": 1, "tags": []]
    #expect(try decoder.decode(Item.self, from: missing) == item)
    #expect(try decoder.decode(Int?.self, from: nil) == nil)
    #expect(try encoder.encode([1, nil, 3] as [Int?]) == [1, nil, 3])
  }

  @Test func datesAreISO8601ToTheMillisecondAlwaysWithThreeDigits() throws {
    let fractional = Date(timeIntervalSince1970: 1_795_974_399.25)
    #expect(try encoder.encode(fractional) == "2026-11-29T17:46:39.250Z")
    #expect(try encoder.encode(Date(timeIntervalSince1970: 0)) == "1970-01-01T00:00:00.000Z")
    #expect(try encoder.encode(Date(timeIntervalSince1970: -1)) == "1969-12-31T23:59:59.000Z")
    #expect(try encoder.encode(Date(timeIntervalSince1970: 0.9996)) == "1970-01-01T00:00:01.000Z")
    #expect(try decoder.decode(Date.self, from: "2026-11-29T17:46:39Z") == Self.date)
    #expect(try decoder.decode(Date.self, from: "2026-11-29T17:46:39.250Z") == fractional)
    #expect(try decoder.decode(Date.self, from: "2026-11-29T19:46:39+02:00") == Self.date)
    let leap = try decoder.decode(Date.self, from: "2024-02-29T00:00:00.123456Z")
    #expect(abs(leap.timeIntervalSince1970 - 1_709_164_800.123456) < 1e-6)
    for bad in [
      "2026-11-29", "2026-02-30T00:00:00Z", "2026-11-29T17:46:39", "2026-11-29T24:00:00Z",
    ] {
      #expect(decodingError(Date.self, .string(bad))?.reason.contains("ISO 8601") == true, "\(bad)")
    }
  }

  /// A whole-millisecond date (what a store's reduce stamp gives) decodes to the same `Date`,
  /// `==`, so a state read back from a snapshot or a recording equals the state written.
  @Test func wholeMillisecondDatesRoundTripExactly() throws {
    for milliseconds: Int64 in [0, 1, 374, 999, 1_800_000_000_374, 1_795_974_399_001, -1, -999] {
      let date = Date(timeIntervalSince1970: Double(milliseconds) / 1000)
      let decoded = try decoder.decode(Date.self, from: try encoder.encode(date))
      #expect(decoded == date, "\(milliseconds) ms")
    }
  }

  @Test func errorsNameTheFieldWithAPointer() throws {
    struct Params: Decodable { var store: String; var action: Fields }
    struct Fields: Decodable { var id: String; var quantity: Int }
    let wrongType: JSON = ["store": "cart", "action": ["id": "a", "quantity": "2"]]
    #expect(
      decodingError(Params.self, wrongType)
        == JSONDecodingError(
          pointer: "/action/quantity", reason: "expected an integer, found a string"))
    let missing: JSON = ["store": "cart", "action": ["id": "a"]]
    #expect(decodingError(Params.self, missing)?.pointer == "/action/quantity")
    #expect(decodingError(Params.self, missing)?.reason.contains("missing") == true)
    #expect(decodingError(Params.self, [1])?.pointer == "")
    #expect(decodingError(Params.self, [1])?.reason == "expected an object, found an array")
    #expect(
      decodingError([Item].self, [["id": "a", "quantity": 1, "price": "x", "tags": []]])?.pointer
        == "/0/price")
    #expect(decodingError([String: Int].self, ["a/b~c": true])?.pointer == "/a~1b~0c")
  }

  @Test func unknownEnumCasesAndValidationErrorsArePlaced() throws {
    let unknown = try #require(
      decodingError(Cart.self, try encoder.encode(cart).with("status", "lost")))
    #expect(unknown.pointer == "/status")
    #expect(unknown.reason.contains("lost"))
    let order: JSON = ["lines": [["quantity": 1], ["quantity": -2]]]
    #expect(
      decodingError(Order.self, order)
        == JSONDecodingError(
          pointer: "/lines/1/quantity", reason: "a quantity cannot be negative"))
    let badCase = try #require(decodingError(Action.self, ["explode": [:]]))
    #expect(badCase.pointer == "")
  }

  @Test func integerRules() throws {
    #expect(try decoder.decode(Int.self, from: 2.0) == 2)
    #expect(decodingError(Int.self, 2.5)?.reason == "expected an integer, found 2.5")
    #expect(
      decodingError(UInt8.self, 300)?.reason
        == "expected an integer from 0 through 255 (UInt8), found 300")
    #expect(decodingError(UInt64.self, -1) != nil)
    #expect(try decoder.decode(Int64.self, from: .integer(.min)) == .min)
    #expect(try decoder.decode(UInt64.self, from: .integer(.max)) == UInt64(Int64.max))
    #expect(try decoder.decode(Double.self, from: 3) == 3.0)
    #expect(decodingError(Float.self, .double(1e300)) != nil)
    #expect(decodingError(Bool.self, 1)?.reason == "expected a boolean, found an integer")
  }

  @Test func unrepresentableValuesAreRefusedWhenEncoding() throws {
    #expect(throws: EncodingError.self) { try encoder.encode([Double.nan]) }
    #expect(throws: EncodingError.self) { try encoder.encode(["x": Float.infinity]) }
    #expect(throws: EncodingError.self) { try encoder.encode(UInt64.max) }
    #expect(try encoder.encode(UInt64(Int64.max)) == .integer(.max))
  }

  @Test func urlsDataAndRawJSON() throws {
    struct Links: Codable, Equatable { var home: URL; var blob: Data; var any: JSON }
    let links = Links(
      home: try #require(URL(string: "https://example.com/a?b=1")), blob: Data([0, 1, 255]),
      any: ["k": [1.5, true]])
    let json = try encoder.encode(links)
    #expect(
      json == ["home": "https://example.com/a?b=1", "blob": "AAH/", "any": ["k": [1.5, true]]])
    #expect(try decoder.decode(Links.self, from: json) == links)
  }

  @Test func jsonIsCodableThroughFoundationToo() throws {
    let value: JSON = ["a": [1, 2.5, "x", nil, true], "b": [:]]
    let data = try JSONEncoder().encode(value)
    #expect(try JSONDecoder().decode(JSON.self, from: data) == value)
  }
}

extension JSON {
  fileprivate func with(_ key: String, _ value: JSON) -> JSON {
    var copy = self
    copy[key] = value
    return copy
  }
}

/// Uses every container the `Encoder` protocol offers, by hand.
private struct HandWritten: Encodable {
  enum Keys: String, CodingKey { case a, nested, list, base, tail }
  func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Keys.self)
    try container.encode(1, forKey: .a)
    var nested = container.nestedContainer(keyedBy: Keys.self, forKey: .nested)
    var list = container.nestedUnkeyedContainer(forKey: .list)
    let base = container.superEncoder(forKey: .base)
    try container.encode("last", forKey: .tail)
    // Filled after the parent went on: the values must still land in their places.
    try nested.encode(true, forKey: .a)
    try list.encode("x")
    var inner = list.nestedContainer(keyedBy: Keys.self)
    try inner.encode(2.5, forKey: .a)
    try list.encodeNil()
    var single = base.singleValueContainer()
    try single.encode([1, 2])
  }
}

private enum Shape: Codable, Equatable {
  case point
  case circle(radius: Double)
  case polygon(points: [[Int]], name: String?, closed: Bool)
}

@Suite("Codable bridge: encoder internals")
struct EncoderInternalsTests {
  @Test func nestedContainersAndSuperEncodersFilledLaterLandInPlace() throws {
    let json = try JSONValueEncoder().encode(HandWritten())
    #expect(json.objectValue?.keys == ["a", "nested", "list", "base", "tail"])
    #expect(
      json == [
        "a": 1, "nested": ["a": true], "list": ["x", ["a": 2.5], nil], "base": [1, 2],
        "tail": "last",
      ])
  }

  @Test("siblings of different shapes, encoded with one reused child encoder")
  func reusedChildEncodersStartClean() throws {
    let shapes: [Shape] = [
      .polygon(points: [[0, 0], [1, 0], [0, 1]], name: "t", closed: true), .point,
      .circle(radius: 2), .polygon(points: [], name: nil, closed: false), .circle(radius: 0.5),
    ]
    let json = try JSONValueEncoder().encode(shapes)
    #expect(
      json[0] == ["polygon": ["points": [[0, 0], [1, 0], [0, 1]], "name": "t", "closed": true]])
    #expect(json[1] == ["point": [:]])
    #expect(json[3] == ["polygon": ["points": [], "name": nil, "closed": false]])
    #expect(try JSONValueDecoder().decode([Shape].self, from: json) == shapes)
  }

  @Test func floatsAreWrittenAsTheyPrint() throws {
    #expect(try JSONValueEncoder().encode([Float(0.1), 19.99]) == [0.1, 19.99])
  }

  @Test func aKeyEncodedTwiceKeepsItsFirstPlaceAndLastValue() throws {
    struct Twice: Encodable {
      enum Keys: CodingKey { case a, b }
      func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Keys.self)
        try container.encode(1, forKey: .a)
        try container.encode(2, forKey: .b)
        try container.encode(3, forKey: .a)
      }
    }
    let json = try JSONValueEncoder().encode(Twice())
    #expect(json.objectValue?.keys == ["a", "b"])
    #expect(json == ["a": 3, "b": 2])
  }
}

extension CodableBridgeTests {
  /// A keyed container looks first after the member it found last: members in another order,
  /// missing or null must still each be found where they are.
  @Test func membersAreFoundInAnyOrder() throws {
    struct Fields: Decodable, Equatable {
      var a: Int
      var b: String?
      var c: Int
      var d: Bool?
    }
    let decoder = JSONValueDecoder()
    let inOrder: JSON = ["a": 1, "b": "x", "c": 3, "d": true]
    let reversed: JSON = ["d": true, "c": 3, "b": "x", "a": 1]
    let shuffled: JSON = ["c": 3, "a": 1, "d": true, "b": "x"]
    for json in [inOrder, reversed, shuffled] {
      #expect(try decoder.decode(Fields.self, from: json) == Fields(a: 1, b: "x", c: 3, d: true))
    }
    let sparse: JSON = ["c": 3, "b": nil, "a": 1]
    #expect(try decoder.decode(Fields.self, from: sparse) == Fields(a: 1, b: nil, c: 3, d: nil))
    #expect(decodingError(Fields.self, ["c": 3, "b": "x", "d": false])?.pointer == "/a")
  }

  /// An array position in an error's pointer is its number, past the first digit too.
  @Test func errorsNameAnArrayPositionPastNine() throws {
    var items: [JSON] = (0..<12).map {
      ["id": .string("i\($0)"), "quantity": 1, "price": 1.5, "tags": []]
    }
    items[11] = ["id": "bad", "quantity": 1, "price": 2, "tags": [true]]
    let error = decodingError([Item].self, .array(items))
    #expect(error?.pointer == "/11/tags/0")
    #expect(error?.reason == "expected a string, found a boolean")
  }

  /// Dates are read in the string's own bytes: each separator accepts exactly its characters.
  @Test func datesAcceptTheirSeparatorsOnly() throws {
    #expect(try decoder.decode(Date.self, from: "2026-11-29t17:46:39z") == Self.date)
    #expect(
      try decoder.decode(Date.self, from: "2026-11-29T17:46:39.5Z")
        == Self.date.addingTimeInterval(0.5))
    #expect(try decoder.decode(Date.self, from: "2026-11-29T18:16:39+00:30") == Self.date)
    for text in [
      "2026-11-29 17:46:39Z", "2026-11-29T17:46:39", "2026-11-29T17-46:39Z", "2026/11/29T17:46:39Z",
      "2026-11-29T17:46:39.Z", "2026-11-29T17:46:39+0030", "2026-11-29T17:46:39Zx",
    ] {
      #expect(decodingError(Date.self, .string(text))?.pointer == "", "\(text)")
    }
  }
}

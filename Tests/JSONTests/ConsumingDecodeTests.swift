import JSON
import Testing

/// `JSONValueDecoder.decode(_:consuming:)`, which lets the tree go as it decodes it: the same
/// values and the same errors as the borrowing decode.
@Suite("Decoding: consuming the tree")
struct ConsumingDecodeTests {
  struct Item: Codable, Equatable {
    var id: String
    var tags: [String]
    var size: Int?
  }

  struct Lists: Codable, Equatable {
    var items: [Item]
    var groups: [[Item]]
    var names: [String: Int]
    var raw: JSON?
  }

  func tree(_ count: Int) -> JSON {
    let items: [JSON] = (0..<count).map { i in
      ["id": .string("i\(i)"), "tags": ["a", .string("t\(i)")], "size": i % 3 == 0 ? nil : 7]
    }
    return [
      "items": .array(items), "groups": [.array(Array(items.prefix(3))), []],
      "names": ["a": 1, "b": 2], "raw": ["kept": [1, 2]],
    ]
  }

  /// The borrowing decode of `make()`, and the consuming decode of another `make()` that
  /// nothing else holds.
  func both<T: Decodable>(_ type: T.Type, _ make: () -> JSON) -> (
    Result<T, JSONDecodingError>, Result<T, JSONDecodingError>
  ) {
    let json = make()
    let borrowed = Result { () throws(JSONDecodingError) in
      try JSONValueDecoder().decode(T.self, from: json)
    }
    let consumed = Result { () throws(JSONDecodingError) in
      try JSONValueDecoder().decode(T.self, consuming: make())
    }
    return (borrowed, consumed)
  }

  @Test func theSameValues() throws {
    let (borrowed, consumed) = both(Lists.self) { tree(500) }
    #expect(try consumed.get() == borrowed.get())
    #expect(try consumed.get().items.count == 500)
  }

  @Test func aTreeHeldElsewhereTooIsLeftAsItWas() throws {
    // Not handed over (the caller keeps a copy): the decode copies what it would move, and the
    // caller's tree is unchanged.
    let json = tree(300)
    let consumed = try JSONValueDecoder().decode(Lists.self, consuming: json)
    #expect(consumed == (try JSONValueDecoder().decode(Lists.self, from: json)))
    #expect(json == tree(300))
  }

  @Test(arguments: [
    ("/items/250/tags/1", JSON.integer(3)),
    ("/items/499/id", JSON.null),
    ("/groups/0/2/size", JSON.string("big")),
    ("/names/b", JSON.bool(true)),
  ])
  func theSameErrors(pointer: String, bad: JSON) throws {
    let tokens = pointer.split(separator: "/").map(String.init)
    let (borrowed, consumed) = both(Lists.self) { replacing(tree(500), tokens[...], with: bad) }
    guard case .failure(let wanted) = borrowed, case .failure(let error) = consumed else {
      Issue.record("expected both decodes to fail at \(pointer)")
      return
    }
    #expect(error.pointer == wanted.pointer)
    #expect(error.reason == wanted.reason)
    #expect(error.pointer == pointer)
  }

  func replacing(_ json: JSON, _ tokens: ArraySlice<String>, with value: JSON) -> JSON {
    guard let first = tokens.first else { return value }
    switch json {
    case .array(var elements):
      guard let index = Int(first) else { return json }
      elements[index] = replacing(elements[index], tokens.dropFirst(), with: value)
      return .array(elements)
    case .object(var object):
      object[first] = replacing(object[first] ?? .null, tokens.dropFirst(), with: value)
      return .object(object)
    default:
      return json
    }
  }

  /// A type that reads one array member twice: consumed, the second read is an error at the
  /// member, not an empty or null value.
  struct ReadsTwice: Decodable {
    var first: [Int]
    var second: [Int]
    enum CodingKeys: String, CodingKey { case list }
    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      first = try container.decode([Int].self, forKey: .list)
      second = try container.decode([Int].self, forKey: .list)
    }
  }

  @Test func aMemberReadTwiceIsAnErrorWhenConsumed() throws {
    let borrowed = try JSONValueDecoder().decode(ReadsTwice.self, from: ["list": [1, 2]])
    #expect(borrowed.second == [1, 2])
    #expect(throws: JSONDecodingError.self) {
      try JSONValueDecoder().decode(ReadsTwice.self, consuming: ["list": [1, 2]])
    }
  }
}

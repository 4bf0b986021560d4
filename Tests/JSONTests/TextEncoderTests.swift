import Foundation
import JSON
import Testing

// Shapes the text encoder must write byte for byte as the tree path does
// (`JSONValueEncoder().encode(value)`, then `JSONWriter.write(_:)`).

private struct Item: Codable {
  var id: String
  var quantity: Int
  var price: Double
  var tags: [String]
  var note: String?
}

private enum Status: String, Codable { case open, closed }

private enum Action: Codable {
  case increment
  case setQuantity(id: String, quantity: Int)
  case rename(String)
  case replace(items: [Item], status: Status?)
}

private struct Cart: Codable {
  var items: [Item]
  var status: Status
  var coupon: String?
  var createdAt: Date
  var lastAction: Action?
  var extra: JSON
  var counts: [String: Int]
  var byNumber: [Int: [Double?]]
  var link: URL
  var blob: Data
  var ratio: Float
  var flags: [Bool]
  var small: UInt8
  var big: UInt64
  var negative: Int64
}

private struct Empty: Codable {}

private struct Nested: Encodable {
  var empty = Empty()
  var emptyArray: [Int] = []
  var emptyMap: [String: Int] = [:]
  var grid: [[Int]] = [[1, 2], [], [3]]
  var maps: [[String: [Double?]]] = [["a": [1.5, nil]], [:]]
  var optionalArray: [Int?] = [nil, 2]
  var doubleOptional: Int?? = .some(nil)
}

/// Encodes through a closure, for the uses of `Codable` a stream must follow or refuse.
private struct Custom: Encodable {
  let body: (any Encoder) throws -> Void
  func encode(to encoder: any Encoder) throws { try body(encoder) }
}

private enum Key: String, CodingKey { case a, b, c, d }

private struct Failure: Error, Equatable { var reason: String }

/// Walks a `JSON` value through containers, as any other Codable type would (the encoders
/// copy a `JSON` member as it is): random values exercise every container path.
private struct Walk: Encodable {
  var json: JSON
  func encode(to encoder: any Encoder) throws {
    switch json {
    case .null:
      var single = encoder.singleValueContainer()
      try single.encodeNil()
    case .bool(let flag):
      var single = encoder.singleValueContainer()
      try single.encode(flag)
    case .integer(let integer):
      var single = encoder.singleValueContainer()
      try single.encode(integer)
    case .double(let double):
      var single = encoder.singleValueContainer()
      try single.encode(double)
    case .string(let string):
      var single = encoder.singleValueContainer()
      try single.encode(string)
    case .array(let elements):
      var array = encoder.unkeyedContainer()
      for element in elements { try array.encode(Walk(json: element)) }
    case .object(let object):
      var members = encoder.container(keyedBy: AnyKey.self)
      for (key, value) in object.members {
        try members.encode(Walk(json: value), forKey: AnyKey(key))
      }
    }
  }
}

private struct AnyKey: CodingKey {
  var stringValue: String
  var intValue: Int? { nil }
  init(_ string: String) { stringValue = string }
  init(stringValue: String) { self.stringValue = stringValue }
  init?(intValue: Int) { nil }
}

/// What a path gives: its bytes, or its error's type and description.
private enum Outcome: Equatable {
  case text(String)
  case failure(String)
}

private let prefix = #"{"id":1,"result":"#

private func tree(_ value: some Encodable, userInfo: [CodingUserInfoKey: Any] = [:]) -> Outcome {
  var writer = JSONWriter()
  writer.append(contentsOf: Array(prefix.utf8))
  do {
    try writer.write(JSONValueEncoder().encode(value, userInfo: userInfo))
  } catch {
    return .failure("\(type(of: error)): \(error)")
  }
  return .text(writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
}

private func text(_ value: some Encodable, userInfo: [CodingUserInfoKey: Any] = [:]) -> Outcome {
  var writer = JSONWriter(capacity: 8)
  writer.append(contentsOf: Array(prefix.utf8))
  do {
    try JSONTextEncoder().encode(value, userInfo: userInfo, to: &writer)
  } catch {
    // Nothing of the value stays written.
    let left = writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    guard left == prefix else { return .failure("left \(left)") }
    return .failure("\(type(of: error)): \(error)")
  }
  return .text(writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) })
}

private func expectSame(
  _ value: some Encodable, sourceLocation: SourceLocation = #_sourceLocation
) {
  let expected = tree(value)
  #expect(text(value) == expected, sourceLocation: sourceLocation)
}

private final class Calls { var count = 0 }

/// Counts its encodings: a value the stream follows is encoded once, one it cannot follow a
/// second time, by the tree path.
private struct Counted<Inner: Encodable>: Encodable {
  let calls: Calls
  let inner: Inner
  func encode(to encoder: any Encoder) throws {
    calls.count += 1
    try inner.encode(to: encoder)
  }
}

private func expectSame(
  _ value: some Encodable, encodings: Int, sourceLocation: SourceLocation = #_sourceLocation
) {
  expectSame(value, sourceLocation: sourceLocation)
  let calls = Calls()
  _ = text(Counted(calls: calls, inner: value))
  #expect(calls.count == encodings, sourceLocation: sourceLocation)
}

private let cart = Cart(
  items: [
    Item(id: "sku-1", quantity: 2, price: 12.5, tags: ["a", "b"], note: nil),
    Item(id: "sku-7", quantity: 1, price: 19.99, tags: [], note: "Zoë's \"mug\"\n\t\u{01}日本🎉"),
  ],
  status: .open, coupon: nil, createdAt: Date(timeIntervalSince1970: 1_795_974_399.25),
  lastAction: .replace(items: [], status: nil),
  extra: ["nested": [1, 2.5, "x", nil, true, ["k": []]], "empty": [:]],
  counts: ["one": 1, "two": 2, "three": 3], byNumber: [1: [0.1, nil], 20: []],
  link: URL(fileURLWithPath: "/tmp/a b/c"), blob: Data([0, 1, 2, 250]), ratio: 0.1,
  flags: [true, false], small: 255, big: UInt64(Int64.max), negative: Int64.min)

@Suite("JSONTextEncoder: the tree path's bytes without the tree")
struct TextEncoderTests {
  @Test func synthesizedShapes() {
    expectSame(cart, encodings: 1)
    expectSame([cart, cart])
    expectSame(Nested())
    expectSame(Empty())
    expectSame([Empty(), Empty()])
    for action in [
      Action.increment, .setQuantity(id: "x", quantity: -3), .rename("y"),
      .replace(items: cart.items, status: .closed),
    ] {
      expectSame(action)
    }
  }

  @Test func scalarsAtTheRoot() {
    expectSame(1)
    expectSame("text \u{7F} \\ \u{1F}")
    expectSame(Optional<Int>.none)
    expectSame(true)
    expectSame(Status.closed)
    expectSame(Date(timeIntervalSince1970: 0))
    expectSame(JSON.null)
    expectSame(["a": JSON.array([])])
  }

  @Test func doublesAndIntegers() {
    for double in [
      0.0, -0.0, 0.1, 19.99, 1e300, -1e-300, .leastNonzeroMagnitude, 1.0, 123_456_789.125,
    ] {
      expectSame(double)
      expectSame(["x": double])
      expectSame([double])
    }
    for float in [Float(0.1), 3.4e38, -1.5, .leastNonzeroMagnitude] {
      expectSame(float)
      expectSame(["x": float])
      expectSame([float])
    }
    expectSame([Int8.min, 0, Int8.max])
    expectSame([UInt.max >> 1, 0])
    expectSame(["max": UInt64(Int64.max)])
  }

  @Test func datesOfEveryForm() {
    let dates = [
      0, 1_795_974_399, 1_795_974_399.999, 1_795_974_399.9996, -1, -62_135_596_801,
      253_402_300_800,
    ].map(Date.init(timeIntervalSince1970:))
    expectSame(dates)
    expectSame(["at": dates[1]])
    // Years without four digits keep the tree's spelling.
    #expect(text(dates[6]) == .text(prefix + #""10000-1-1T0s""#))
  }

  @Test func errorsAreTheTreePaths() {
    for bad in [Double.nan, .infinity, -.infinity] {
      let outcome = text(["ok": [1.0], "bad": [2.0, bad]])
      #expect(outcome == tree(["ok": [1.0], "bad": [2.0, bad]]))
      if case .text = outcome { Issue.record("a non-finite double was written") }
      expectSame(bad)
      expectSame(Float(bad))
    }
    expectSame([UInt64.max])
    expectSame(["x": UInt.max])
    expectSame(UInt64(Int64.max) + 1)
    // A JSON value the writer refuses: the writer's error, with its pointer.
    expectSame(["a": [JSON.double(.nan)]])
    // A value's own error, thrown halfway through its text.
    let throwing = Custom { encoder in
      var container = encoder.container(keyedBy: Key.self)
      try container.encode("written", forKey: .a)
      throw Failure(reason: "refused")
    }
    expectSame(["x": [throwing]])
  }

  @Test func nestingPastTheLimitIsTheWritersError() {
    var deep = JSON.array([])
    for _ in 0..<JSON.maximumDepth { deep = .array([deep]) }
    expectSame(deep)
    expectSame(["x": deep])
    var walked = Walk(json: [1])
    for _ in 0..<(JSON.maximumDepth - 2) { walked = Walk(json: .array([walked.json])) }
    expectSame(walked)
    expectSame([walked])
  }

  @Test func randomValuesWalkedThroughContainers() {
    // The round-trip tests' generator: every escape, NUL, non-ASCII, number extremes.
    var generator = JSONValueGenerator(random: SeededGenerator(state: 28))
    for _ in 0..<300 {
      let value = generator.value(depth: 1)
      expectSame(Walk(json: value))
      expectSame(value)
    }
  }

  @Test func usesAStreamFollows() {
    // A nested container left for the parent's next member, as synthesized enums do.
    expectSame(
      Custom { encoder in
        var container = encoder.container(keyedBy: Key.self)
        var nested = container.nestedContainer(keyedBy: Key.self, forKey: .a)
        try nested.encode(1, forKey: .b)
        var list = nested.nestedUnkeyedContainer(forKey: .c)
        try list.encode(2)
        _ = list.nestedContainer(keyedBy: Key.self)
        try container.encode(3, forKey: .b)
      }, encodings: 1)
    // Two containers from one encoder, and a value that encodes nothing.
    expectSame(
      Custom { encoder in
        var first = encoder.container(keyedBy: Key.self)
        try first.encode(1, forKey: .a)
        var second = encoder.container(keyedBy: Key.self)
        try second.encode(2, forKey: .b)
        try first.encode(Custom { _ in }, forKey: .c)
      }, encodings: 1)
    // A single value that is itself a container, and a JSON value encoded directly.
    expectSame(
      Custom { encoder in
        var single = encoder.singleValueContainer()
        try single.encode(Custom { try JSON.array([1, "a"]).encode(to: $0) })
      }, encodings: 1)
    expectSame([1, 2].map { n in Custom { try JSON.integer(Int64(n)).encode(to: $0) } })
  }

  @Test func usesAStreamCannotFollowGoTheTreePath() {
    // A nested container written after its parent went on.
    let late = Custom { encoder in
      var container = encoder.container(keyedBy: Key.self)
      var nested = container.nestedContainer(keyedBy: Key.self, forKey: .a)
      try container.encode(1, forKey: .b)
      try nested.encode(2, forKey: .c)
    }
    // The same key twice: the tree keeps its first position and its last value.
    let twice = Custom { encoder in
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(1, forKey: .a)
      try container.encode(2, forKey: .b)
      try container.encode(3, forKey: .a)
    }
    let superEncoded = Custom { encoder in
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(1, forKey: .a)
      var base = container.superEncoder().singleValueContainer()
      try base.encode("base")
    }
    let singleTwice = Custom { encoder in
      var single = encoder.singleValueContainer()
      try single.encode(1)
      try single.encode(2)
    }
    let changedMind = Custom { encoder in
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(1, forKey: .a)
      var array = encoder.unkeyedContainer()
      try array.encode(2)
    }
    let swallowed = Custom { encoder in
      var container = encoder.container(keyedBy: Key.self)
      try? container.encode(
        Custom { inner in
          var members = inner.container(keyedBy: Key.self)
          try members.encode("half", forKey: .a)
          throw Failure(reason: "caught by the parent")
        }, forKey: .a)
      try? container.encode(Double.nan, forKey: .b)
      try container.encode(1, forKey: .c)
    }
    let twiceInMany = Custom { encoder in
      var container = encoder.container(keyedBy: AnyKey.self)
      for n in 0..<20 { try container.encode(n, forKey: AnyKey("k\(n)")) }
      try container.encode(-1, forKey: AnyKey("k3"))
    }
    for value in [late, twice, superEncoded, singleTwice, changedMind, swallowed, twiceInMany] {
      expectSame(value, encodings: 2)
      expectSame(["x": [value, value]])
      expectSame([
        Custom { encoder in
          var single = encoder.singleValueContainer()
          try single.encodeNil()
        }, value,
      ])
    }
  }

  @Test func theKeysOfTheObjectBeforeAreATemplateNotAPromise() {
    func object(_ keys: [String]) -> Custom {
      Custom { encoder in
        var container = encoder.container(keyedBy: AnyKey.self)
        for (number, key) in keys.enumerated() { try container.encode(number, forKey: AnyKey(key)) }
      }
    }
    let many = (0..<12).map { "k\($0)" }
    let shapes: [[String]] = [
      ["a", "b", "c"], ["a", "b", "c"], ["a", "b"], ["a", "b", "c", "d"], ["a", "c", "b"],
      ["a", "b", "a"], ["b", "a", "b"], ["a", "b", "c"], [], ["q\"\n", "a"], ["q\"\n", "a"],
      many, many + ["k3"], many, ["k0", "k1", "x"] + many.dropFirst(2), many + ["k11"],
    ]
    expectSame(shapes.map(object))
    for shape in shapes {
      expectSame([object(["a", "b", "c"]), object(shape)])
      expectSame([object(many), object(shape), object(shape)])
    }
    // Dictionaries of one type, keys in a different order or different keys each time.
    expectSame([["a": 1, "b": 2], ["b": 1, "a": 2], ["c": 3], [:], ["a": 1, "b": 2, "c": 3]])
  }

  @Test func aContainerKeptPastItsValueWritesNothingWrong() throws {
    final class Stash { var container: KeyedEncodingContainer<Key>? }
    let stash = Stash()
    let keeper = Custom { encoder in
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(1, forKey: .a)
      stash.container = container
    }
    let user = Custom { encoder in
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(2, forKey: .b)
      try stash.container?.encode(3, forKey: .c)
    }
    expectSame([keeper, user])
    // Between the elements of one call, and from one call to the next of an element encoder.
    var writer = JSONWriter()
    try JSONTextEncoder().encode(elements: [keeper, user], to: &writer)
    let elements = JSONTextEncoder.ElementEncoder()
    try elements.encode(keeper, to: &writer)
    try elements.encode(user, to: &writer)
    #expect(
      String(decoding: writer.withUnsafeBytes { Array($0) }, as: UTF8.self)
        == #"{"a":1},{"b":2}{"a":1}{"b":2}"#)
  }

  @Test func userInfoReachesTheValue() throws {
    let key = try #require(CodingUserInfoKey(rawValue: "unit"))
    let value = Custom { encoder in
      var single = encoder.singleValueContainer()
      try single.encode(encoder.userInfo[key] as? String ?? "none")
    }
    #expect(text([value], userInfo: [key: "kg"]) == tree([value], userInfo: [key: "kg"]))
    #expect(text([value], userInfo: [key: "kg"]) == .text(prefix + #"["kg"]"#))
  }

  @Test func elementsAreWrittenAsTheTreeWritesEachOne() throws {
    let items = cart.items + cart.items
    var expected = JSONWriter()
    expected.append("[")
    for (index, item) in items.enumerated() {
      if index > 0 { expected.append(",") }
      try expected.write(JSONValueEncoder().encode(item))
    }
    expected.append("]")
    var writer = JSONWriter(capacity: 4)
    writer.append("[")
    try JSONTextEncoder().encode(elements: items[0..<1], to: &writer)
    try JSONTextEncoder().encode(elements: items[1..<1], continuing: true, to: &writer)
    try JSONTextEncoder().encode(elements: items[1...], continuing: true, to: &writer)
    writer.append("]")
    #expect(writer.withUnsafeBytes { Array($0) } == expected.withUnsafeBytes { Array($0) })

    // One element a call, the encoder kept between them.
    var oneByOne = JSONWriter(capacity: 4)
    oneByOne.append("[")
    let elements = JSONTextEncoder.ElementEncoder()
    for (index, item) in items.enumerated() {
      if index > 0 { oneByOne.append(",") }
      try elements.encode(item, at: index, to: &oneByOne)
    }
    oneByOne.append("]")
    #expect(oneByOne.withUnsafeBytes { Array($0) } == expected.withUnsafeBytes { Array($0) })
    let kept = oneByOne.count
    #expect(throws: EncodingError.self) { try elements.encode([1.0, .nan], at: 4, to: &oneByOne) }
    #expect(oneByOne.count == kept)
    let twice = Custom { encoder in
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(1, forKey: .a)
      try container.encode(2, forKey: .a)
    }
    try elements.encode(twice, to: &oneByOne)
    try elements.encode(items[0], to: &oneByOne)
    let tail =
      try JSONValueEncoder().encode(twice).serialized()
      + JSONValueEncoder().encode(items[0]).serialized()
    #expect(oneByOne.withUnsafeBytes { Array($0[kept...]) } == tail)

    // A failing element takes back the whole call.
    let before = writer.count
    #expect(throws: EncodingError.self) {
      try JSONTextEncoder().encode(elements: [1.0, 2.0, .nan], continuing: true, to: &writer)
    }
    #expect(writer.count == before)
  }

  @Test func handedOnTextCannotBeTakenBack() throws {
    let long = String(repeating: "x", count: 100)
    let twice = Custom { encoder in
      var container = encoder.container(keyedBy: Key.self)
      try container.encode(long, forKey: .a)
      try container.encode(long, forKey: .b)
      try container.encode(long, forKey: .c)
      try container.encode(long, forKey: .a)
    }
    var pieces: [UInt8] = []
    var writer = JSONWriter(capacity: 16)
    #expect(throws: EncodingError.self) {
      try writer.write(handingOnAt: 16, to: { pieces += $0 }) { writer in
        try JSONTextEncoder().encode(twice, to: &writer)
      }
    }
    // A value the stream follows is written whole, in pieces.
    pieces = []
    var streamed = JSONWriter(capacity: 16)
    try streamed.write(handingOnAt: 16, to: { pieces += $0 }) { writer in
      try JSONTextEncoder().encode(cart, to: &writer)
    }
    streamed.withUnsafeBytes { pieces += $0 }
    #expect(.text(prefix + String(decoding: pieces, as: UTF8.self)) == tree(cart))
  }
}

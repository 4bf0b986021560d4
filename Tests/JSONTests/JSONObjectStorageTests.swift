import Testing

@testable import JSON

/// The members buffer of `JSONObject` (JSONObjectStorage.swift): one tail-allocated buffer,
/// copy on write, growth, the key index past `linearLimit` keys, and destruction of members.
@Suite("JSONObject members buffer")
struct JSONObjectStorageTests {
  /// `count` members named k0, k1, ... with their number as value.
  static func numbered(_ count: Int) -> JSONObject {
    var object = JSONObject()
    for key in 0..<count { object["k\(key)"] = .integer(Int64(key)) }
    return object
  }

  /// Sizes on both sides of the linear-scan limit, where the index appears or goes away.
  static let sizes = [
    0, 1, JSONObject.linearLimit - 1, JSONObject.linearLimit,
    JSONObject.linearLimit + 1, 40,
  ]

  @Test(arguments: sizes) func settingAnExistingKeyLeavesTheCopyAlone(size: Int) {
    guard size > 0 else { return }
    let original = Self.numbered(size)
    var copy = original
    copy["k0"] = "changed"
    #expect(!copy.sharesStorage(with: original))
    #expect(original["k0"] == 0)
    #expect(copy["k0"] == "changed")
    #expect(copy.keys == original.keys)
    // Through the position API too.
    var second = original
    second.setValue(true, at: size - 1)
    #expect(original.value(at: size - 1) == .integer(Int64(size - 1)))
    #expect(second["k\(size - 1)"] == true)
  }

  @Test(arguments: sizes) func addingAKeyLeavesTheCopyAlone(size: Int) {
    let original = Self.numbered(size)
    var copy = original
    copy["new"] = "value"
    #expect(original.count == size)
    #expect(original["new"] == nil)
    #expect(original.position(of: "new") == nil)
    #expect(copy.count == size + 1)
    #expect(copy["new"] == "value")
    #expect(copy.position(of: "new") == size)
    for key in 0..<size { #expect(copy["k\(key)"] == .integer(Int64(key))) }
  }

  @Test(arguments: sizes) func removingAKeyLeavesTheCopyAlone(size: Int) {
    guard size > 0 else { return }
    let original = Self.numbered(size)
    var copy = original
    #expect(copy.removeValue(forKey: "k0") == 0)
    #expect(copy.removeValue(forKey: "k0") == nil)
    #expect(original["k0"] == 0)
    #expect(original.count == size)
    #expect(copy.count == size - 1)
    // Later members moved down one position, and lookups (scan or index) agree.
    for key in 1..<size {
      #expect(copy.position(of: "k\(key)") == key - 1)
      #expect(copy["k\(key)"] == .integer(Int64(key)))
      #expect(original.position(of: "k\(key)") == key)
    }
  }

  /// Crossing the limit both ways: the index must be built, then dropped, and stay right.
  @Test func growingAndShrinkingAcrossTheLinearLimitKeepsLookupsRight() {
    var object = JSONObject()
    var snapshots: [JSONObject] = []
    for key in 0..<(JSONObject.linearLimit + 4) {
      object["k\(key)"] = .integer(Int64(key))
      snapshots.append(object)
    }
    for key in stride(from: JSONObject.linearLimit + 3, through: 0, by: -2) {
      object.removeValue(forKey: "k\(key)")
      #expect(object["k\(key)"] == nil)
      snapshots.append(object)
    }
    for (step, snapshot) in snapshots.prefix(JSONObject.linearLimit + 4).enumerated() {
      #expect(snapshot.count == step + 1)
      for key in 0...step { #expect(snapshot.position(of: "k\(key)") == key) }
      #expect(snapshot["k\(step + 1)"] == nil)
    }
    #expect(object.keys == stride(from: 0, to: JSONObject.linearLimit + 4, by: 2).map { "k\($0)" })
    for (position, key) in object.keys.enumerated() {
      #expect(object.position(of: key) == position)
    }
  }

  /// Appending to a uniquely held object moves its members to a buffer twice as large; the
  /// members (strings and nested objects, which have reference counts) must survive the move.
  @Test func growthPastCapacityKeepsEveryMember() {
    var object = JSONObject(reservingCapacity: 2)
    for key in 0..<100 {
      object["key \(key) with a long enough name to be heap allocated"] = [
        "text": .string(String(repeating: "x", count: 20 + key)), "n": .integer(Int64(key)),
      ]
    }
    #expect(object.count == 100)
    for key in 0..<100 {
      let value = object["key \(key) with a long enough name to be heap allocated"]
      #expect(value?["n"] == .integer(Int64(key)))
      #expect(value?["text"]?.stringValue?.count == 20 + key)
    }
  }

  @Test func aLargeObjectLooksUpEveryKey() throws {
    let object = Self.numbered(10_000)
    #expect(object.count == 10_000)
    for key in stride(from: 0, to: 10_000, by: 7) {
      #expect(object["k\(key)"] == .integer(Int64(key)))
      #expect(object.position(of: "k\(key)") == key)
      #expect(object.key(at: key) == "k\(key)")
    }
    #expect(object["k10000"] == nil)
    #expect(object["k-1"] == nil)
    let text = try JSON.object(object).serialized()
    #expect(try JSON(parsing: text) == .object(object))
  }

  /// Members are destroyed exactly once: nested objects shared between copies, moved by
  /// growth, removed and replaced. A double release or a leaked member would crash or show
  /// up as wrong values here (and under sanitizers).
  @Test func deepSharedStructuresSurviveCopiesAndDestruction() throws {
    var leaf: JSON = ["name": "leaf", "tags": ["a", "b"]]
    for depth in 0..<200 {
      leaf = ["depth": .integer(Int64(depth)), "child": leaf, "label": .string("level \(depth)")]
    }
    var copies: [JSON] = []
    for round in 0..<50 {
      var copy = leaf
      copy["round"] = .integer(Int64(round))
      if round % 2 == 0 { copy["child"] = nil }
      copies.append(copy)
    }
    copies.removeAll { $0["round"]?.integerValue.map { $0 % 3 == 0 } ?? false }
    #expect(copies.count == 33)
    for copy in copies {
      #expect(copy["depth"] == 199)
      let evenRound = copy["round"]?.integerValue.map { $0 % 2 == 0 }
      #expect(evenRound == (copy["child"] == nil))
    }
    var walk = leaf
    var levels = 0
    while let child = walk["child"] {
      walk = child
      levels += 1
    }
    #expect(levels == 200)
    #expect(walk == ["name": "leaf", "tags": ["a", "b"]])
    copies = []
    let text = try leaf.serialized()
    #expect(try JSON(parsing: text) == leaf)
  }

  @Test func equalityIgnoresOrderButNotContent() {
    let forward = JSONObject((0..<20).map { ("k\($0)", JSON.integer(Int64($0))) })
    let backward = JSONObject((0..<20).reversed().map { ("k\($0)", JSON.integer(Int64($0))) })
    #expect(forward == backward)
    #expect(forward.hashValue == backward.hashValue)
    #expect(forward.keys != backward.keys)
    var changed = backward
    changed["k5"] = 6
    #expect(forward != changed)
    var renamed = backward
    renamed.removeValue(forKey: "k5")
    renamed["k20"] = 5
    #expect(forward != renamed)
    let small: JSONObject = ["a": 1, "b": [1, 2]]
    let swapped: JSONObject = ["b": [1, 2], "a": 1]
    #expect(small == swapped)
    #expect(small.hashValue == swapped.hashValue)
    #expect(small != ["a": 1, "b": [2, 1]])
    #expect(small != ["a": 1])
  }

  /// Equal objects built different ways (parsed, encoded, edited) hash alike.
  @Test func equalObjectsHashAlikeWhateverTheirHistory() throws {
    struct Item: Encodable { var b = 2, a = 1, c = "three" }
    let parsed = try JSON(parsing: #"{"a":1,"b":2,"c":"three"}"#)
    let encoded = try JSONValueEncoder().encode(Item())
    var edited: JSON = ["c": "three", "x": 0, "a": 0]
    edited["x"] = nil
    edited["a"] = 1
    edited["b"] = 2
    #expect(parsed == encoded)
    #expect(parsed == edited)
    #expect(Set([parsed, encoded, edited]).count == 1)
  }

  /// A hand-written `encode(to:)` may encode a key twice: first position, last value, and the
  /// index (past the limit) must not list the key twice.
  @Test(arguments: [3, 12]) func anEncodedRepeatKeepsTheFirstPositionAndTheLastValue(count: Int)
    throws
  {
    struct Repeats: Encodable {
      let count: Int
      struct Key: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
        static func named(_ name: String) -> Key { Key(stringValue: name) }
      }
      func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for key in 0..<count { try container.encode(key, forKey: .named("k\(key)")) }
        try container.encode("again", forKey: .named("k1"))
      }
    }
    let object = try #require(JSONValueEncoder().encode(Repeats(count: count)).objectValue)
    #expect(object.count == count)
    #expect(object.position(of: "k1") == 1)
    #expect(object["k1"] == "again")
    #expect(object.key(at: count - 1) == "k\(count - 1)")
  }

  /// The members view reads in place and agrees with `keys`, `values` and the position API.
  @Test func membersAgreeWithKeysAndValues() {
    let object = Self.numbered(12)
    #expect(object.members.map(\.key) == object.keys)
    #expect(object.members.map(\.value) == object.values)
    #expect(object.members.count == 12)
    for position in object.members.indices {
      #expect(object.member(at: position) == (object.key(at: position), object.value(at: position)))
    }
    #expect(JSONObject().members.isEmpty)
  }
}

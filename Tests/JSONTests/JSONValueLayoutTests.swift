import Testing

@testable import JSON

@Suite("JSON value layout and copy-on-write")
struct JSONValueLayoutTests {
  /// Diffing a large array walks its elements' bits, so the walk costs in proportion to the
  /// stride (bench/patch). A string is held in the value (no box per string: a parsed state's
  /// strings were a third of its memory, docs/architecture.md) and objects are one reference,
  /// so a value is three words; a new case or payload that widens it should be a deliberate
  /// choice.
  @Test func aValueIsThreeWords() {
    #expect(MemoryLayout<JSON>.stride == 3 * MemoryLayout<Int>.stride)
    #expect(MemoryLayout<JSONObject>.size == MemoryLayout<Int>.size)
  }

  @Test func anObjectCopySharesStorageUntilWritten() {
    let original: JSONObject = ["a": 1, "b": "two"]
    var copy = original
    #expect(copy.sharesStorage(with: original))
    copy["c"] = 3
    #expect(!copy.sharesStorage(with: original))
    #expect(original == ["a": 1, "b": "two"])
    #expect(copy.keys == ["a", "b", "c"])
    copy.removeValue(forKey: "a")
    #expect(original.keys == ["a", "b"])
    #expect(copy == ["b": "two", "c": 3])
  }

  /// Every empty object starts from one shared buffer; writing to one must not reach another.
  @Test func emptyObjectsAreIndependent() {
    var first = JSONObject()
    var second = JSONObject()
    first["x"] = true
    second["y"] = false
    #expect(first == ["x": true])
    #expect(second == ["y": false])
    #expect(JSONObject().isEmpty)
  }

  /// Past the linear-scan limit the key index is copied with the members, not shared.
  @Test func aLargeObjectCopyKeepsItsOwnIndex() {
    var original = JSONObject()
    for key in 0..<20 { original["k\(key)"] = .integer(Int64(key)) }
    var copy = original
    copy.removeValue(forKey: "k3")
    copy["new"] = "value"
    #expect(original["k3"] == 3)
    #expect(original["new"] == nil)
    #expect(copy["k3"] == nil)
    #expect(copy["k19"] == 19)
    #expect(copy["new"] == "value")
    #expect(original.position(of: "k19") == 19)
    #expect(copy.position(of: "k19") == 18)
    #expect(copy.position(of: "new") == 19)
  }

  /// Strings are boxed; equality, hashing and matching still see the text.
  @Test func boxedStringsBehaveAsValues() {
    let text = String(repeating: "ü", count: 40)
    let a = JSON.string(text)
    let b = JSON.string(String(text))
    #expect(a == b)
    #expect(a.hashValue == b.hashValue)
    #expect(a.stringValue == text)
    guard case .string(let inner) = a else {
      Issue.record("expected a string")
      return
    }
    #expect(inner == text)
  }
}

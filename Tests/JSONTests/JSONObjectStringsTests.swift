import JSON
import Testing

@Suite struct JSONObjectStringsTests {
  @Test func aStringMemberGivesItsText() {
    let request: JSONObject = [
      "id": 7, "jsonrpc": "2.0", "method": "a method name longer than fifteen bytes",
    ]
    #expect(request.string(forKey: "jsonrpc") == "2.0")
    #expect(request.string(forKey: "method") == "a method name longer than fifteen bytes")
  }

  @Test func anAbsentMemberOrOneOfAnotherKindIsNil() {
    let object: JSONObject = ["id": 7, "store": .null, "action": ["type": "increment"]]
    #expect(object.string(forKey: "wait") == nil)
    #expect(object.string(forKey: "id") == nil)
    #expect(object.string(forKey: "store") == nil)  // present as null
    #expect(object.string(forKey: "action") == nil)
  }

  @Test func aPositionGivesTheTextOfTheMemberThere() throws {
    let object: JSONObject = ["store": "counter", "wait": 1]
    let store = try #require(object.position(of: "store"))
    let wait = try #require(object.position(of: "wait"))
    #expect(object.string(at: store) == "counter")
    #expect(object.string(at: wait) == nil)
  }

  /// `hasString` is true only for a string member with exactly that text (compared as
  /// Swift strings: canonically equivalent text is equal).
  @Test func aStringMemberIsComparedInPlace() {
    let long = "a method name longer than fifteen bytes"
    let request: JSONObject = [
      "jsonrpc": "2.0", "method": .string(long), "id": 7, "v": "2.0 ", "e": "e\u{301}",
    ]
    #expect(request.hasString("2.0", forKey: "jsonrpc"))
    #expect(request.hasString(long, forKey: "method"))
    #expect(!request.hasString("2.00", forKey: "jsonrpc"))
    #expect(!request.hasString("2.0", forKey: "v"))
    #expect(!request.hasString("7", forKey: "id"))
    #expect(!request.hasString("2.0", forKey: "absent"))
    #expect(request.hasString("\u{e9}", forKey: "e"))
  }

  /// Past the size at which objects keep a key index, the index finds the member.
  @Test func aLargeObjectIsReadThroughItsIndex() {
    var object = JSONObject()
    for number in 0..<20 { object["k\(number)"] = .string("v\(number)") }
    #expect(object.string(forKey: "k0") == "v0")
    #expect(object.string(forKey: "k19") == "v19")
    #expect(object.string(forKey: "k20") == nil)
  }
}

import JSON
import Testing

@Suite struct JSONObjectValuesTests {
  @Test func valuesAreFoundWhateverTheMemberOrder() {
    let request: JSONObject = [
      "params": ["store": "counter"], "method": "dispatch", "id": 7, "jsonrpc": "2.0",
    ]
    let (id, version, method, params) = request.values("id", "jsonrpc", "method", "params")
    #expect(id == 7)
    #expect(version == "2.0")
    #expect(method == "dispatch")
    #expect(params == ["store": "counter"])
  }

  @Test func anAbsentKeyOrAKeyNotAskedIsNil() {
    let object: JSONObject = ["store": "counter", "action": .null, "extra": true]
    let (store, action, wait, fourth) = object.values("store", "action", "wait")
    #expect(store == "counter")
    #expect(action == .null)  // present as null, not absent
    #expect(wait == nil)
    #expect(fourth == nil)
  }

  /// Past the size at which objects keep a key index, the index answers.
  @Test func aLargeObjectIsReadThroughItsIndex() {
    var object = JSONObject()
    for number in 0..<20 { object["k\(number)"] = .integer(Int64(number)) }
    let (first, last, missing, middle) = object.values("k0", "k19", "k20", "k7")
    #expect(first == 0 && last == 19 && missing == nil && middle == 7)
  }

  @Test func withValueReadsAMemberInPlaceAndIsNilForAnAbsentKey() {
    let action: JSONObject = ["type": "increment", "by": 2]
    #expect(action.withValue(forKey: "type") { $0 == "increment" } == true)
    #expect(action.withValue(forKey: "by") { $0.integerValue } == 2)
    #expect(action.withValue(forKey: "missing") { _ in true } == nil)
    var large = JSONObject()
    for number in 0..<20 { large["k\(number)"] = .integer(Int64(number)) }
    #expect(large.withValue(forKey: "k13") { $0.integerValue } == 13)
  }
}

import JSON
import Testing

/// A keyed container returns a member of the expected kind at once and leaves every other
/// value to the decoder's shared check (JSONDecodingContainers.swift): values and errors must
/// be those of that check, which decodes the same value alone (a single value at the root).
@Suite("Decoding: scalar members of an object")
struct KeyedScalarTests {
  struct Member<Value: Decodable & Equatable>: Decodable, Equatable {
    var value: Value
    var optional: Value?
  }

  /// The member decode of `json` (as `value` and as `optional`) and the root decode of it,
  /// each as its value or its error's pointer and reason.
  func compare<Value: Decodable & Equatable>(_ type: Value.Type, _ json: JSON) {
    let root = Result { () throws(JSONDecodingError) in
      try JSONValueDecoder().decode(Value.self, from: json)
    }
    let member = Result { () throws(JSONDecodingError) in
      try JSONValueDecoder().decode(Member<Value>.self, from: ["value": json, "optional": json])
    }
    switch (root, member) {
    case (.success(let wanted), .success(let decoded)):
      #expect(decoded.value == wanted)
      #expect(decoded.optional == wanted)
    case (.failure(let wanted), .failure(let error)):
      #expect(error.pointer == "/value")
      #expect(error.reason == wanted.reason)
      let optional = #expect(throws: JSONDecodingError.self) {
        try JSONValueDecoder().decode(
          Member<Value>.self, from: ["value": .null, "optional": json])
      }
      // `value` is null, so its own error comes first; alone, `optional` says the root's.
      #expect(optional?.pointer == "/value")
      if json.isNull {
        // An optional member that is null is absent, whatever the root says of null.
        let alone = try? JSONValueDecoder().decode(
          OptionalOnly<Value>.self, from: ["optional": json])
        #expect(alone != nil && alone?.optional == nil)
        return
      }
      let alone = #expect(throws: JSONDecodingError.self) {
        try JSONValueDecoder().decode(OptionalOnly<Value>.self, from: ["optional": json])
      }
      #expect(alone?.pointer == "/optional")
      #expect(alone?.reason == wanted.reason)
    default:
      Issue.record("\(Value.self) from \(json): root \(root), member \(member)")
    }
  }

  struct OptionalOnly<Value: Decodable & Equatable>: Decodable {
    var optional: Value?
  }

  let values: [JSON] = [
    .bool(true), .bool(false), .string("text"), .string(""), .integer(7), .integer(-3),
    .integer(300), .integer(Int64.max), .double(2.0), .double(2.5), .double(-0.0), .null,
    ["a": 1], [1, 2],
  ]

  @Test func booleans() { for json in values { compare(Bool.self, json) } }
  @Test func strings() { for json in values { compare(String.self, json) } }
  @Test func integers() {
    for json in values {
      compare(Int.self, json)
      compare(Int64.self, json)
      compare(Int8.self, json)
      compare(UInt.self, json)
    }
  }
}

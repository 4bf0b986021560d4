import Foundation
import JSON
import Testing

/// Issue 15: every refusal says what was expected in the wire's terms, with its pointer;
/// never Swift's words ("Cannot initialize Keep from invalid String value mine").
@Suite struct DecodingErrorWordingTests {
  enum Keep: String, Codable, CaseIterable { case local, server }
  enum Level: Int, Codable, CaseIterable { case low = 1, high = 2 }
  enum Plain: String, Codable { case on, off }
  enum Choice: Codable, Equatable { case pick(index: Int), skip }
  struct Resolve: Codable {
    var id: String
    var keep: Keep
    var levels: [Level]
    var plain: Plain?
    var choice: Choice?
    var tags: [String: Int]?
    var when: Date?
  }

  func refusal(_ json: JSON) -> JSONDecodingError? {
    do {
      _ = try JSONValueDecoder().decode(Resolve.self, from: json)
      return nil
    } catch {
      return error
    }
  }

  static let valid: JSONObject = ["id": "note-1", "keep": "local", "levels": [1]]

  func with(_ key: String, _ value: JSON) -> JSON {
    var object = Self.valid
    object.set(key, value)
    return .object(object)
  }

  @Test func aBadEnumValueListsTheValuesTheWireAccepts() {
    let error = refusal(with("keep", "mine"))
    #expect(
      error
        == JSONDecodingError(
          pointer: "/keep", reason: #"expected one of: local, server, found "mine""#))
    #expect(
      refusal(with("levels", [1, 3]))
        == JSONDecodingError(pointer: "/levels/1", reason: "expected one of: 1, 2, found 3"))
  }

  @Test func anEnumThatCannotListItsValuesStillSpeaksInWireTerms() {
    let error = refusal(with("plain", "dim"))
    #expect(error == JSONDecodingError(pointer: "/plain", reason: #"unknown value "dim""#))
  }

  @Test func aMissingFieldSaysWhatWouldHaveBeenRight() {
    var object = Self.valid
    object.removeValue(forKey: "keep")
    #expect(
      refusal(.object(object))
        == JSONDecodingError(
          pointer: "/keep",
          reason: "required field 'keep' is missing; expected one of: local, server"))
    object = Self.valid
    object.removeValue(forKey: "levels")
    #expect(refusal(.object(object))?.reason.hasSuffix("expected an array") == true)
  }

  @Test func wrongKindsAreNamedAsJSONKinds() {
    #expect(
      refusal(with("id", 7))
        == JSONDecodingError(pointer: "/id", reason: "expected a string, found an integer"))
    #expect(refusal(with("levels", "1"))?.reason == "expected an array, found a string")
    #expect(
      refusal(with("tags", ["a": "b"]))
        == JSONDecodingError(pointer: "/tags/a", reason: "expected an integer, found a string"))
    #expect(
      refusal(with("choice", ["pick": ["index": 1], "skip": [:]]))
        == JSONDecodingError(
          pointer: "/choice", reason: "expected an object with exactly one member, naming the case")
    )
  }

  @Test func noReasonUsesSwiftsWords() {
    let cases: [JSON] = [
      with("keep", "mine"), with("keep", 1), with("levels", [7]), with("plain", "x"),
      with("choice", [:]), with("choice", ["pick": [:]]), with("when", "yesterday"),
      with("id", nil),
    ]
    for json in cases {
      let reason = refusal(json)?.reason ?? "accepted"
      #expect(
        reason.hasPrefix("expected") || reason.hasPrefix("unknown value")
          || reason.hasPrefix("required"), "\(reason)")
      for swiftism in [
        "Cannot initialize", "Swift.", "Int", "String", "Keep", "Level", "Choice", "CodingKeys",
      ] {
        #expect(!reason.contains(swiftism), "\(reason)")
      }
    }
  }
}

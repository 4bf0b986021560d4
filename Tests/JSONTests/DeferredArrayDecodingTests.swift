import Testing

@testable import JSON

/// An array left as text (`DeferredArrays`) decodes to what the whole parse and the decode of
/// its tree give: the same values, the same decoding error; and text the whole parse refuses
/// is never taken for JSON. Checked on every truncation, deletion and one-byte change of a
/// message, with the thresholds lowered so that its arrays are left as text and split between
/// two threads at every element.
@Suite struct DeferredArrayDecodingTests {
  typealias Item = DeferredArrayItem

  /// `items` read as a `ParallelDecodedArray` (from the text), `others` as a plain array (from
  /// the text parsed into a tree).
  struct State: Decodable, Equatable {
    var title: String
    var others: [Int]
    var items: [Item]

    enum CodingKeys: String, CodingKey { case title, others, items }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      title = try container.decode(String.self, forKey: .title)
      others = try container.decode([Int].self, forKey: .others)
      items = try container.decode(ParallelDecodedArray<Item>.self, forKey: .items).elements
    }
  }

  enum Outcome: Equatable {
    case malformed
    case decoded(State)
    case refused(pointer: String, reason: String)
  }

  static let message = #"""
    {"params":{"state":{"title":"t","others":[1, 2,3],"items":[{"id":"a","n":1,"tags":["x","y"]},
    {"id":"b","n":2,"tags":[],"note":"é\n"} ,{"id":"c","n":3,"tags":["[z]","{"]},
    {"id":"d","n":4,"tags":["\"]"],"note":null},{"id":"e","n":-5,"tags":["\\"]}]}}}
    """#

  func decode(_ state: consuming JSON) -> Outcome {
    do {
      return .decoded(try JSONValueDecoder().decode(State.self, consuming: state))
    } catch {
      return .refused(pointer: error.pointer, reason: error.reason)
    }
  }

  func whole(_ bytes: [UInt8]) -> Outcome {
    guard let message = try? JSON(parsing: bytes) else { return .malformed }
    return decode(message["params"]?["state"] ?? .null)
  }

  /// Nil when nothing was left as text.
  func fromText(_ bytes: [UInt8]) -> Outcome? {
    bytes.withUnsafeBytes { raw in
      JSON.$deferredArrayBytes.withValue(8) {
        ParallelDecoding.$threshold.withValue(2) { () -> Outcome? in
          guard let (value, arrays) = JSON.parsingDeferringArrays(raw, under: ["params", "state"])
          else { return .malformed }
          guard !arrays.isEmpty else { return nil }
          let text = DeferredArrays(bytes: raw, arrays: arrays, keeper: nil)
          let outcome = DeferredArrays.$current.withValue(text) {
            decode(value["params"]?["state"] ?? .null)
          }
          return text.isWellFormed() ? outcome : .malformed
        }
      }
    }
  }

  @Test func theMessageItselfIsDecodedFromItsText() throws {
    let bytes = Array(Self.message.utf8)
    let outcome = fromText(bytes)
    #expect(outcome == whole(bytes))
    guard case .decoded(let state)? = outcome else {
      Issue.record("not decoded: \(String(describing: outcome))")
      return
    }
    #expect(state.items.map(\.id) == ["a", "b", "c", "d", "e"])
    #expect(state.others == [1, 2, 3])
    // Both arrays were left as text.
    let left = bytes.withUnsafeBytes { raw in
      JSON.$deferredArrayBytes.withValue(8) {
        JSON.parsingDeferringArrays(raw, under: ["params", "state"])?.arrays.map(\.tokens)
      }
    }
    #expect(left == [["others"], ["items"]])
  }

  final class Keeper: Sendable {}

  /// The text is let go once all of it was read as JSON (the answer that follows does not need
  /// it), and kept when it was not (the message is then answered from it).
  @Test(arguments: [false, true])
  func theTextIsLetGoOnceReadWhole(broken: Bool) {
    var bytes = Array(Self.message.utf8)
    if broken, let five = bytes.lastIndex(of: UInt8(ascii: "5")) {
      bytes[five] = UInt8(ascii: "x")  // the last item's `"n":-5`: no longer a number
    }
    bytes.withUnsafeBytes { raw in
      JSON.$deferredArrayBytes.withValue(8) {
        guard let (value, arrays) = JSON.parsingDeferringArrays(raw, under: ["params", "state"])
        else {
          Issue.record("nothing left as text")
          return
        }
        weak var watched: Keeper?
        let text = DeferredArrays(
          bytes: raw, arrays: arrays,
          keeper: {
            let keeper = Keeper()
            watched = keeper
            return keeper
          }())
        #expect(watched != nil)
        let outcome = DeferredArrays.$current.withValue(text) {
          decode(value["params"]?["state"] ?? .null)
        }
        if case .decoded = outcome { #expect(!broken) } else { #expect(broken) }
        #expect(text.isWellFormed() == !broken)
        #expect((watched == nil) == !broken)
      }
    }
  }

  /// Reads `others` through a nested unkeyed container and `items` through `superDecoder`:
  /// each gets its array left as text parsed into a tree.
  struct ReadByHand: Decodable, Equatable {
    var others: [Int] = []
    var items: [Item]

    enum CodingKeys: String, CodingKey { case others, items }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      var others = try container.nestedUnkeyedContainer(forKey: .others)
      while !others.isAtEnd { self.others.append(try others.decode(Int.self)) }
      items = try [Item](from: container.superDecoder(forKey: .items))
    }
  }

  @Test func arraysReadThroughNestedContainersAreParsedIntoTrees() throws {
    let bytes = Array(Self.message.utf8)
    let whole = try JSONValueDecoder().decode(
      ReadByHand.self, from: try JSON(parsing: bytes)["params"]?["state"] ?? .null)
    #expect(whole.others == [1, 2, 3] && whole.items.count == 5)
    let fromText = try bytes.withUnsafeBytes { raw in
      try JSON.$deferredArrayBytes.withValue(8) { () throws -> ReadByHand in
        let (value, arrays) = try #require(
          JSON.parsingDeferringArrays(raw, under: ["params", "state"]))
        #expect(arrays.count == 2)
        let text = DeferredArrays(bytes: raw, arrays: arrays, keeper: nil)
        return try DeferredArrays.$current.withValue(text) {
          try JSONValueDecoder().decode(
            ReadByHand.self, consuming: value["params"]?["state"] ?? .null)
        }
      }
    }
    #expect(fromText == whole)
  }

  @Test func everyChangeOfTheMessageAgreesWithTheWholeParse() {
    let original = Array(Self.message.utf8)
    var variants: [[UInt8]] = []
    for end in 0..<original.count { variants.append(Array(original[..<end])) }
    for position in original.indices {
      var deleted = original
      deleted.remove(at: position)
      variants.append(deleted)
      for byte in Array(#"[]{}",0 \x"#.utf8) + [0x00, 0x07, 0xC3, 0xFF]
      where byte != original[position] {
        var changed = original
        changed[position] = byte
        variants.append(changed)
      }
    }
    var leftAsText = 0
    for variant in variants {
      let expected = whole(variant)
      guard let outcome = fromText(variant) else { continue }
      leftAsText += 1
      if outcome != expected {
        Issue.record(
          "\(String(decoding: variant, as: UTF8.self)): \(outcome) but the whole parse \(expected)")
      }
    }
    // Most variants still leave an array as text: the check covers that path.
    #expect(leftAsText > variants.count / 2)
  }
}

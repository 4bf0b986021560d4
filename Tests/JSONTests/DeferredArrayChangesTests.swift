import Testing

@testable import JSON

/// A journal replayed onto a snapshot whose large array was left as text
/// (`DeferredArrays.apply(_:to:retiring:)`: changes inside one element wait for its parse, any
/// other change reaching the array parses it first) gives what the journal applied to the whole
/// tree gives: the same decoded state, or a failure where that fails. Random journals of
/// changes of every kind: inside elements, adding and removing elements, elsewhere in the
/// state, to the array or around it, at elements that do not exist.
@Suite struct DeferredArrayChangesTests {
  typealias Item = DeferredArrayItem

  /// `items` read from the text element by element, or, while `readsPlainArrays`, as a plain
  /// array, which parses the text into a tree first.
  struct State: Decodable, Equatable {
    var title: String
    var items: [Item]

    enum CodingKeys: String, CodingKey { case title, items }

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      title = try container.decode(String.self, forKey: .title)
      items =
        Self.readsPlainArrays
        ? try container.decode([Item].self, forKey: .items)
        : try container.decode(ParallelDecodedArray<Item>.self, forKey: .items).elements
    }

    @TaskLocal static var readsPlainArrays = false
  }

  enum Outcome: Equatable {
    case failed
    case decoded(State)
  }

  static let snapshot = #"""
    {"title":"t","items":[{"id":"a","n":1,"tags":["x"]},{"id":"b","n":2,"tags":[]},
    {"id":"c","n":3,"tags":["y","z"],"note":"c"},{"id":"d","n":4,"tags":["w"]},
    {"id":"e","n":5,"tags":[]},{"id":"f","n":6,"tags":["v"],"note":null}],"meta":{"k":1}}
    """#

  static func item(_ id: String) -> JSON { ["id": .string(id), "n": 9, "tags": ["q"]] }

  /// One operation from a pool of every kind.
  static func operation(_ random: inout SeededGenerator) -> JSONPatch.Operation {
    let i = String(Int.random(in: 0..<7, using: &random))  // 6 is past the end
    let j = String(Int.random(in: 0..<6, using: &random))
    let pool: [JSONPatch.Operation] = [
      .replace(path: JSONPointer(tokens: ["items", i, "n"]), value: 7),
      .replace(path: JSONPointer(tokens: ["items", i]), value: item("r\(i)")),
      .add(path: JSONPointer(tokens: ["items", i, "note"]), value: "added"),
      .remove(path: JSONPointer(tokens: ["items", i, "note"])),
      .add(path: JSONPointer(tokens: ["items", i, "tags", "-"]), value: "t"),
      .remove(path: JSONPointer(tokens: ["items", i, "tags", "0"])),
      .move(
        from: JSONPointer(tokens: ["items", i, "tags", "0"]),
        path: JSONPointer(tokens: ["items", i, "tags", "-"])),
      .copy(
        from: JSONPointer(tokens: ["items", i, "id"]),
        path: JSONPointer(tokens: ["items", i, "note"])),
      .test(path: JSONPointer(tokens: ["items", i, "n"]), value: .integer(Int64(i) ?? 0)),
      .add(path: JSONPointer(tokens: ["items", i]), value: item("new\(i)")),
      .remove(path: JSONPointer(tokens: ["items", i])),
      .add(path: JSONPointer(tokens: ["items", "-"]), value: item("end")),
      .move(from: JSONPointer(tokens: ["items", i]), path: JSONPointer(tokens: ["items", j])),
      .copy(
        from: JSONPointer(tokens: ["items", i, "id"]),
        path: JSONPointer(tokens: ["items", j, "note"])),
      .replace(path: JSONPointer(tokens: ["items", "0\(i)", "n"]), value: 1),
      .replace(path: JSONPointer(tokens: ["title"]), value: "u"),
      .add(path: JSONPointer(tokens: ["meta", "x"]), value: 1),
      .replace(path: JSONPointer(tokens: ["items"]), value: [item("only")]),
      .copy(from: JSONPointer(tokens: ["items"]), path: JSONPointer(tokens: ["backup"])),
      .test(path: JSONPointer(tokens: ["items", i, "id"]), value: "c"),
      .replace(path: JSONPointer(tokens: ["items", i, "n"]), value: "not a number"),
    ]
    return pool[Int.random(in: 0..<pool.count, using: &random)]
  }

  static func journal(seed: UInt64) -> [JSONPatch] {
    var random = SeededGenerator(state: seed)
    return (0..<Int.random(in: 1...4, using: &random)).map { _ in
      JSONPatch((0..<Int.random(in: 1...3, using: &random)).map { _ in operation(&random) })
    }
  }

  func decode(_ state: consuming JSON) -> Outcome {
    guard let decoded = try? JSONValueDecoder().decode(State.self, consuming: state) else {
      return .failed
    }
    return .decoded(decoded)
  }

  func wholeTree(_ journal: [JSONPatch]) -> Outcome {
    guard var state = try? JSON(parsing: Self.snapshot) else { return .failed }
    for patch in journal {
      guard (try? patch.apply(to: &state)) != nil else { return .failed }
    }
    return decode(state)
  }

  func fromText(_ journal: [JSONPatch]) -> Outcome {
    let bytes = Array(Self.snapshot.utf8)
    return bytes.withUnsafeBytes { raw in
      JSON.$deferredArrayBytes.withValue(8) {
        ParallelDecoding.$threshold.withValue(2) { () -> Outcome in
          guard let (parsed, arrays) = JSON.parsingDeferringArrays(raw, under: []),
            arrays.map(\.tokens) == [["items"]]
          else {
            Issue.record("the items were not left as text")
            return .failed
          }
          var state = parsed
          let text = DeferredArrays(bytes: raw, arrays: arrays, keeper: nil)
          var retired: [JSON] = []
          for patch in journal {
            guard (try? text.apply(patch, to: &state, retiring: &retired)) != nil else {
              return .failed
            }
          }
          return DeferredArrays.$current.withValue(text) { decode(state) }
        }
      }
    }
  }

  @Test func aJournalWithNoChangesDecodesTheSnapshot() {
    let outcome = fromText([])
    #expect(outcome == wholeTree([]))
    guard case .decoded(let state) = outcome else {
      Issue.record("not decoded")
      return
    }
    #expect(state.items.map(\.id) == ["a", "b", "c", "d", "e", "f"])
  }

  @Test(arguments: [false, true])
  func randomJournalsAgreeWithTheWholeTree(readingAPlainArray: Bool) {
    State.$readsPlainArrays.withValue(readingAPlainArray) { randomJournalsAgree() }
  }

  func randomJournalsAgree() {
    var decoded = 0
    for seed in 0..<3_000 as Range<UInt64> {
      let journal = Self.journal(seed: seed)
      let expected = wholeTree(journal)
      let outcome = fromText(journal)
      if case .decoded = expected { decoded += 1 }
      if outcome != expected {
        Issue.record("seed \(seed): \(journal.map(\.json)): \(outcome), whole tree \(expected)")
        return
      }
    }
    // Both outcomes are common: the check covers the changes that apply.
    #expect(decoded > 500)
  }
}

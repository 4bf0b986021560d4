import JSON
import StateKit
import Testing

/// The store's incremental publisher: every patch, applied to the previous published view,
/// gives exactly the full encoding of the new view, whatever the edits.
@StateActor
@Suite struct PublishingTests {
  /// Sends `actions` and checks, after each, that the patch turns the previous view into the
  /// encoding of the new one, and that the version moved only with a non-empty patch.
  private func check(_ actions: [Shelf.Action], store: Store<Shelf> = Store(feature: Shelf()))
    throws
  {
    var document = store.published
    var patches: [[JSON]] = []
    store.observer = { patches.append($0.patch) }
    for action in actions {
      patches.removeAll()
      let version = store.version
      store.send(action)
      let expected = try JSONValueEncoder().encode(Shelf().view(of: store.state))
      for patch in patches { try JSONPatch(json: .array(patch)).apply(to: &document) }
      #expect(document == expected, "after \(action): patches \(patches)")
      #expect(store.published == expected, "after \(action)")
      #expect(store.version == version + (patches.contains { !$0.isEmpty } ? 1 : 0))
    }
  }

  @Test func scriptedEditsPublishExactly() throws {
    try check([
      .add(id: "a", title: "Alpha", at: nil), .add(id: "b", title: "Beta", at: nil),
      .add(id: "c", title: "Gamma", at: 0), .rename(id: "b", title: "Bravo"),
      .copies(id: "a", delta: 2), .tag(id: "a", tag: "x"), .select(id: "a"), .edit(id: "a"),
      .edit(id: nil), .note("hello"), .note(nil), .remove(id: "c"), .log("one"), .sort,
      .rename(id: "zzz", title: "missing"), .clear, .add(id: "d", title: "Delta", at: nil),
      .batch(count: 600), .rename(id: "b3", title: "late"), .select(id: nil),
    ])
  }

  @Test func randomEditsPublishExactly() throws {
    var generator = SplitMix(seed: 42)
    var actions: [Shelf.Action] = []
    for _ in 0..<600 {
      let id = "k\(generator.next() % 12)"
      switch generator.next() % 11 {
      case 0, 1: actions.append(.add(id: id, title: "t\(generator.next() % 5)", at: nil))
      case 2: actions.append(.add(id: id, title: "front", at: Int(generator.next() % 4)))
      case 3: actions.append(.remove(id: id))
      case 4, 5: actions.append(.rename(id: id, title: "r\(generator.next() % 3)"))
      case 6: actions.append(.copies(id: id, delta: Int(generator.next() % 3)))
      case 7: actions.append(.tag(id: id, tag: "g"))
      case 8: actions.append(generator.next() % 2 == 0 ? .edit(id: id) : .select(id: id))
      case 9: actions.append(generator.next() % 7 == 0 ? .sort : .note("n\(generator.next() % 2)"))
      default: actions.append(generator.next() % 15 == 0 ? .clear : .log("l"))
      }
    }
    try check(actions)
  }

  @Test func oneEditOfALargeCollectionIsOneOperation() throws {
    let store = Store(feature: Shelf())
    store.send(.batch(count: 5_000))
    var patches: [[JSON]] = []
    store.observer = { patches.append($0.patch) }
    store.send(.rename(id: "b4321", title: "renamed"))
    #expect(patches == [[["op": "replace", "path": "/books/4321/title", "value": "renamed"]]])
    store.send(.remove(id: "b10"))
    #expect(patches.last == [["op": "remove", "path": "/books/10"]])
  }

  /// A store that opens with no array element skips the publisher's first walk (start-up);
  /// its first changes are still published as the operations they are, never the whole view.
  @Test func aStoreOpenedEmptyPublishesItsFirstChangesExactly() throws {
    let store = Store(feature: Shelf())
    var patches: [[JSON]] = []
    store.observer = { patches.append($0.patch) }
    store.send(.select(id: nil))  // the first update: the walk finds nothing changed
    #expect(patches.isEmpty && store.version == 0)
    store.send(.add(id: "a", title: "A", at: nil))
    // The new element and the derived total: no replacement of the books, nor of the view.
    #expect(
      patches == [
        [
          [
            "op": "add", "path": "/books/0",
            "value": ["id": "a", "title": "A", "copies": 1, "tags": []],
          ],
          ["op": "replace", "path": "/stats/total", "value": 1],
        ]
      ])
    store.send(.rename(id: "a", title: "renamed"))
    #expect(patches.last == [["op": "replace", "path": "/books/0/title", "value": "renamed"]])
  }

  @Test func anUnchangedViewPublishesNothing() throws {
    let store = Store(feature: Shelf())
    store.send(.add(id: "a", title: "A", at: nil))
    var count = 0
    store.observer = { _ in count += 1 }
    store.send(.rename(id: "a", title: "A"))  // touched, but equal
    store.send(.select(id: nil))
    store.send(.remove(id: "nope"))
    #expect(count == 0)
    #expect(store.version == 1)
  }

  @Test func aCopiedCollectionForksItsHistory() throws {
    // A state restored from an earlier copy must not be mistaken for the published one.
    var books = IdentifiedArray<Shelf.Book>([Shelf.Book(id: "a", title: "A", copies: 1)])
    let copy = books
    books[id: "a"]?.title = "changed"
    #expect(books != copy)
    #expect(copy[id: "a"]?.title == "A")
    let store = Store(feature: Shelf(), state: Shelf.State(books: books))
    try check([.rename(id: "a", title: "again"), .add(id: "b", title: "B", at: 0)], store: store)
  }

  /// A view whose encoding nests an unkeyed container inside a nested keyed one: the walk
  /// cannot follow it there, so it gives up on the whole value (the nested level's refusal
  /// reaches the level the walk started) and publishes its full encoding, diffed.
  @Test func aContainerTheWalkCannotFollowDeepInsideIsPublishedWhole() throws {
    let store = Store(feature: Tally())
    var document = store.published
    var patches: [[JSON]] = []
    store.observer = { patches.append($0.patch) }
    let actions: [Tally.Action] = [
      .append(count: 3), .rename(label: "b"), .append(count: 4), .rename(label: "c"),
    ]
    for action in actions {
      patches.removeAll()
      store.send(action)
      for patch in patches { try JSONPatch(json: .array(patch)).apply(to: &document) }
      let expected = try JSONValueEncoder().encode(store.state)
      #expect(document == expected, "after \(action): patches \(patches)")
      #expect(store.published == expected, "after \(action)")
    }
  }
}

/// A small deterministic generator (SplitMix64) for property tests.
struct SplitMix {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// A state whose `counts` are encoded in an unkeyed container nested in a keyed one.
private struct Tally: Feature {
  struct State: Codable, Equatable, Sendable {
    var label = "a"
    var counts: [Int] = []

    private enum Keys: String, CodingKey { case label, detail, counts }

    init() {}

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: Keys.self)
      label = try container.decode(String.self, forKey: .label)
      let detail = try container.nestedContainer(keyedBy: Keys.self, forKey: .detail)
      counts = try detail.decode([Int].self, forKey: .counts)
    }

    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: Keys.self)
      try container.encode(label, forKey: .label)
      var detail = container.nestedContainer(keyedBy: Keys.self, forKey: .detail)
      var list = detail.nestedUnkeyedContainer(forKey: .counts)
      for count in counts { try list.encode(count) }
    }
  }

  enum Action: Codable, Sendable {
    case append(count: Int)
    case rename(label: String)
  }

  static let name = "tally"
  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .append(let count): state.counts.append(count)
    case .rename(let label): state.label = label
    }
    return .none
  }
}

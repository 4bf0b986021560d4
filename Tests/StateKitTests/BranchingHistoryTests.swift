import JSON
import Testing

@testable import StateKit

/// A document of lines and a title: edits whose order matters, so that a recomputation that
/// drops the wrong action or reduces in the wrong order gives another state.
private struct Document: Feature {
  struct State: Codable, Equatable, Sendable {
    var title = ""
    var lines: [String] = []
    var stamps: [Int64] = []
  }
  enum Action: Codable, Equatable, Sendable {
    case append(line: String)
    case prepend(line: String)
    case edit(index: Int, line: String)
    case rename(title: String)
    case double
  }
  static let name = "document"
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    state.stamps.append(ReduceTime.current ?? -1)
    switch action {
    case .append(let line): state.lines.append(line)
    case .prepend(let line): state.lines.insert(line, at: 0)
    case .edit(let index, let line):
      if state.lines.indices.contains(index) { state.lines[index] = line }
    case .rename(let title): state.title = title
    case .double: state.lines = state.lines.map { $0 + $0 }
    }
    return .none
  }
}

/// `history/skip`, the state at a version for a fork, and `state/blame`, in the store.
@StateActor
@Suite struct BranchingHistoryTests {
  private func store(limit: Int = 100) -> Store<Document> {
    let store = Store(feature: Document())
    store.startHistory(limit: limit, sink: nil)
    return store
  }

  private func without<T: Equatable>(_ stamps: [T], at index: Int) -> [T] {
    var stamps = stamps
    stamps.remove(at: index)
    return stamps
  }

  @Test func skippingTheMiddleOfThreeEditsEqualsAStoreThatNeverSawIt() throws {
    let edited = store()
    edited.send(.append(line: "a"))
    edited.send(.append(line: "b"))
    edited.send(.double)
    let stamps = edited.state.stamps
    #expect(try edited.skip(entryAt: 2, skipped: true, cause: nil) == 4)
    let never = store()
    never.send(.append(line: "a"))
    never.send(.double)
    #expect(edited.state.lines == never.state.lines)
    #expect(edited.state.lines == ["aa"])
    #expect(edited.state.title == never.state.title)
    // Recomputed at the recorded times: the reducer saw the first and third stamps again.
    #expect(edited.state.stamps == without(stamps, at: 1))
    #expect(edited.published["lines"] == never.published["lines"])
    let entries = edited.historyEntries(since: nil, limit: 10)
    #expect(entries.map(\.skipped) == [false, true, false, false])
    #expect(entries.last?.kind == .skip(entry: 2, skipped: true))
    // The patch of the skip turns the view published at 3 into the recomputed one.
    var view = try edited.published(at: 3)
    try JSONPatch(json: .array(entries.last?.patch ?? [])).apply(to: &view)
    #expect(view == edited.published)
  }

  @Test func recomputedActionsAreReducedAtTheTimesTheyWereFirstReducedAt() throws {
    let edited = store()
    // Replay's path takes the stamp given, so the three reduces have distinct recorded times.
    for (line, at) in [("a", 1000), ("b", 2000), ("c", 3000)] as [(String, Int64)] {
      _ = try edited.replay(wire: ["type": "append", "line": .string(line)], at: at)
    }
    #expect(edited.state.stamps == [1000, 2000, 3000])
    try edited.skip(entryAt: 2, skipped: true, cause: nil)
    #expect(edited.state.stamps == [1000, 3000])
    #expect(edited.state.lines == ["a", "c"])
  }

  @Test func unskippingRestoresTheStateAsEverySkipIsAToggle() throws {
    let edited = store()
    edited.send(.append(line: "a"))
    edited.send(.append(line: "b"))
    edited.send(.double)
    let original = edited.state
    try edited.skip(entryAt: 2, skipped: true, cause: nil)
    try edited.skip(entryAt: 1, skipped: true, cause: nil)
    #expect(edited.state.lines == [])
    try edited.skip(entryAt: 2, skipped: false, cause: nil)
    #expect(edited.state.lines == ["bb"])
    try edited.skip(entryAt: 1, skipped: false, cause: nil)
    #expect(edited.state == original)
    // Toggling to what it already is changes nothing and makes no entry.
    let version = edited.version
    #expect(try edited.skip(entryAt: 1, skipped: false, cause: nil) == version)
    #expect(edited.historyEntries(since: nil, limit: 100).count == 7)
  }

  @Test func aSkipSurvivesTheCheckpointMovingPastTheSkippedAction() throws {
    let edited = store(limit: 4)
    edited.send(.append(line: "a"))
    edited.send(.append(line: "b"))
    try edited.skip(entryAt: 2, skipped: true, cause: nil)
    for index in 0..<12 { edited.send(.rename(title: "t\(index)")) }
    // The skipped action left the log; the checkpoint was reduced without it.
    #expect(try #require(edited.firstHeldVersion) > 2)
    let first = try #require(edited.firstHeldVersion)
    #expect(try edited.state(at: first).lines == ["a"])
    #expect(try edited.state(at: edited.version) == edited.state)
    #expect(edited.state.lines == ["a"])
  }

  @Test func aToggleOfATrimmedActionSaysTheOldestThatCanBe() throws {
    let edited = store(limit: 4)
    for index in 0..<20 { edited.send(.append(line: "\(index)")) }
    let first = try #require(edited.firstHeldVersion)
    #expect(first > 1)
    #expect(throws: SkipError.notRecomputable(oldest: first + 1, rewound: nil)) {
      try edited.skip(entryAt: 1, skipped: true, cause: nil)
    }
    #expect(throws: SkipError.future(current: 20)) {
      try edited.skip(entryAt: 21, skipped: true, cause: nil)
    }
  }

  @Test func anActionBeforeARewindCannotBeRecomputed() throws {
    let edited = store()
    edited.send(.append(line: "a"))
    edited.send(.append(line: "b"))
    try edited.rewind(to: 1, cause: nil)
    edited.send(.append(line: "c"))
    #expect(throws: SkipError.notRecomputable(oldest: 4, rewound: 3)) {
      try edited.skip(entryAt: 2, skipped: true, cause: nil)
    }
    try edited.skip(entryAt: 4, skipped: true, cause: nil)
    #expect(edited.state.lines == ["a"])
  }

  @Test func theStateAtAVersionIsWhatAForkStartsFrom() throws {
    let edited = store()
    edited.send(.append(line: "a"))
    edited.send(.append(line: "b"))
    let json = try edited.privateState(at: 1)
    let fork = try Store(
      feature: Document(), id: "fork", initial: nil, restoring: (state: json, version: 1))
    #expect(fork.state.lines == ["a"])
    #expect(fork.version == 1)
  }

  @Test func blameFindsTheLastWriterAndTheEntriesBeforeItThatTouchedTheValue() throws {
    let edited = store()
    edited.send(.rename(title: "one"))  // 1
    edited.send(.append(line: "x"))  // 2
    edited.send(.rename(title: "two"))  // 3
    edited.send(.append(line: "y"))  // 4
    let entries = edited.historyEntries(since: nil, limit: 100)
    let title = HistoryBlame.touches(of: "/title", in: entries)
    #expect(title.map(\.entry.version) == [3, 1])
    // Edits inside a value touch it, and so does a replace of an ancestor.
    let root = HistoryBlame.touches(of: "", in: entries)
    #expect(root.map(\.entry.version) == [4, 3, 2, 1])
  }

  /// An entry with only a patch and a version, for the blame rule alone.
  private func entry(_ version: UInt64, _ patch: [JSON]) -> HistoryEntry {
    HistoryEntry(
      store: "s", seq: version, kind: .action, version: version, action: { nil },
      origin: HistoryEntry.Origin(request: nil, action: nil), patch: patch, events: [], at: 0,
      duration: .zero)
  }

  @Test func blameFollowsAValueBackThroughRemovesAndMovesOfItsArray() {
    let entries = [
      entry(1, [["op": "add", "path": "/items/2", "value": "x"]]),  // x created at 2
      entry(2, [["op": "replace", "path": "/items/2", "value": "x2"]]),  // x edited
      entry(3, [["op": "replace", "path": "/items/1", "value": "other"]]),  // a neighbour
      entry(4, [["op": "remove", "path": "/items/0"]]),  // x shifts to 1
      entry(5, [["op": "move", "from": "/items/1", "path": "/items/0"]]),  // x moves to 0
      entry(6, [["op": "replace", "path": "/items/1", "value": "y"]]),  // not x
    ]
    let touches = HistoryBlame.touches(of: "/items/0", in: entries)
    #expect(touches.map(\.entry.version) == [5, 2, 1])
    #expect(touches.map(\.path.description) == ["/items/0", "/items/2", "/items/2"])
    #expect(touches.last?.created == true)
    // Inside the value: a descendant's edit touches it, and so does the parent's replace.
    let nested = [
      entry(1, [["op": "replace", "path": "", "value": ["a": ["b": 1]]]]),
      entry(2, [["op": "replace", "path": "/a/b", "value": 2]]),
      entry(3, [["op": "add", "path": "/c", "value": 3]]),
    ]
    #expect(HistoryBlame.touches(of: "/a", in: nested).map(\.entry.version) == [2, 1])
  }

  @Test func blameFollowsAnArrayElementWhoseIndexShifted() throws {
    let edited = store()
    edited.send(.append(line: "x"))  // 1: add /lines/0
    edited.send(.edit(index: 0, line: "x2"))  // 2: replace /lines/0
    edited.send(.prepend(line: "y"))  // 3: x2 moves to /lines/1
    let entries = edited.historyEntries(since: nil, limit: 100)
    #expect(edited.state.lines == ["y", "x2"])
    let x = HistoryBlame.touches(of: "/lines/1", in: entries)
    // Whatever patch the publisher chose for the prepend, the element's own writers are 2 and 1.
    #expect(x.last?.entry.version == 1)
    #expect(x.last?.created == true)
    #expect(x.contains { $0.entry.version == 2 })
    let y = HistoryBlame.touches(of: "/lines/0", in: entries)
    #expect(y.first?.entry.version == 3)
  }
}

import JSON
import StateKit
import Synchronization
import Testing

@testable import StateServer

/// Rows enough for the publisher to leave their elements to the state (`ArrayElision`).
private struct Rows: Feature {
  struct Row: Codable, Equatable, Sendable, Identifiable {
    var id: String
    var text: String

    /// Rows encoded so far, to check what a request encodes.
    static let encoded = Atomic<Int>(0)

    private enum CodingKeys: String, CodingKey { case id, text }

    func encode(to encoder: any Encoder) throws {
      Self.encoded.add(1, ordering: .relaxed)
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(id, forKey: .id)
      try container.encode(text, forKey: .text)
    }
  }
  struct State: Codable, Equatable, Sendable {
    var title = "rows"
    var rows: IdentifiedArray<Row> = []
  }
  enum Action: Codable, Equatable, Sendable {
    case edit(id: String, text: String)
    case title(String)
    /// Replaces the rows whole: their log cannot say what moved.
    case reverse
  }
  static let name = "rows"
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .edit(let id, let text): state.rows[id: id]?.text = text
    case .title(let title): state.title = title
    case .reverse: state.rows = IdentifiedArray(state.rows.reversed())
    }
    return .none
  }
}

/// A store whose view keeps a large array's elements in the typed state only answers
/// `store/open` and `state/get` with text written a batch of elements at a time
/// (`Outgoing.streamed`): the same values as the JSON it no longer keeps, and the same
/// answers to a path, a subscription and a batch.
@StateActor
@Suite(.serialized) struct StreamedStateTests {
  private func connection(persistence: Persistence? = nil) -> (Connection, OutputQueue) {
    let registry = StoreRegistry(features: [Rows().descriptor()], persistence: persistence)
    let queue = OutputQueue(maxMessages: 1000)
    let connection = Connection(
      registry: registry, output: queue, options: ServerOptions(), log: Log(level: .error))
    return (connection, queue)
  }

  /// The lines written, parsed back, and whether each was written from text.
  private func send(_ line: JSON, to connection: Connection, _ queue: OutputQueue) throws -> [(
    JSON, Bool
  )] {
    connection.receive([.message(line)])
    var lines: [(JSON, Bool)] = []
    while let batch = queue.takeQueued() {
      for line in batch {
        var writer = JSONWriter()
        try line.write(to: &writer)
        let bytes = writer.withUnsafeBytes { Array($0.dropLast()) }
        var streamed = false
        if case .streamed = line { streamed = true }
        lines.append((try JSON(parsing: bytes), streamed))
      }
    }
    return lines
  }

  private func request(_ id: Int, _ method: String, _ params: JSON) -> JSON {
    ["jsonrpc": "2.0", "id": .integer(Int64(id)), "method": .string(method), "params": params]
  }

  /// A connection that persists to `directory`, and the lines answering its `store/open` of a
  /// persisted store `r` of 2,500 rows.
  private func persistedRows(
    in directory: String
  ) throws -> (Connection, OutputQueue, Persistence, [(JSON, Bool)]) {
    let persistence = Persistence(stateDirectory: directory, warn: { _ in })
    let (connection, queue) = connection(persistence: persistence)
    let opened = try send(
      request(
        1, "store/open",
        ["feature": "rows", "store": "r", "persist": true, "state": ["rows": rows(2_500)]]),
      to: connection, queue)
    return (connection, queue, persistence, opened)
  }

  /// Rows of about 540 bytes: 2,500 of them are written in two pieces of text.
  private func rows(_ count: Int) -> JSON {
    .array((0..<count).map { ["id": .string("r\($0)"), "text": .string(text($0))] })
  }

  private func text(_ row: Int) -> String { "row \(row) " + String(repeating: "x", count: 512) }

  @Test func aLargeViewIsAnsweredFromTextWithTheValuesOfTheWholeJSON() throws {
    let (connection, queue) = connection()
    // Past the publisher's threshold (ArrayElision, 1,000 elements).
    let count = 2_500
    var expected: JSON = ["title": "rows", "rows": rows(count)]
    let opened = try send(
      request(1, "store/open", ["feature": "rows", "store": "r", "state": ["rows": rows(count)]]),
      to: connection, queue)
    #expect(opened.count == 1 && opened[0].1)
    #expect(opened[0].0["result"]?["state"] == expected)
    #expect(opened[0].0["result"]?["version"] == 0 && opened[0].0["result"]?["feature"] == "rows")
    let subscribed = try send(
      request(2, "state/subscribe", ["store": "r", "path": "/rows/1200"]), to: connection, queue)
    #expect(subscribed[0].0["result"]?["state"] == ["id": "r1200", "text": .string(text(1200))])
    let edited = try send(
      request(
        3, "dispatch", ["store": "r", "action": ["type": "edit", "id": "r1200", "text": "new"]]),
      to: connection, queue)
    let patches = edited.filter { $0.0["method"] == "state/patch" }.compactMap {
      $0.0["params"]?["patch"]
    }
    #expect(!patches.isEmpty)
    for patch in patches {
      #expect(patch == [["op": "replace", "path": "/rows/1200/text", "value": "new"]])
    }
    expected = try JSONPatch([.replace(path: "/rows/1200/text", value: "new")]).applied(
      to: expected)
    let whole = try send(request(4, "state/get", ["store": "r"]), to: connection, queue)
    #expect(whole[0].1)
    #expect(whole[0].0["result"]?["state"] == expected)
    #expect(whole[0].0["result"]?["version"] == 1)
    let one = try send(
      request(5, "state/get", ["store": "r", "path": "/rows/1200/text"]), to: connection, queue)
    #expect(!one[0].1 && one[0].0["result"]?["state"] == "new")
    let missing = try send(
      request(6, "state/get", ["store": "r", "path": .string("/rows/\(count)")]), to: connection,
      queue)
    #expect(missing[0].0["error"]?["code"] == -32602)
    let root = try send(request(9, "state/subscribe", ["store": "r"]), to: connection, queue)
    #expect(root[0].1 && root[0].0["result"]?["state"] == expected)
    // In a batch, the text is read back into the array of responses.
    let batch = try send(
      [request(7, "state/get", ["store": "r"]), request(8, "state/get", ["store": "r"])],
      to: connection, queue)
    #expect(batch.count == 1)
    #expect(batch[0].0[0]?["result"]?["state"] == expected)
    #expect(batch[0].0[1]?["result"]?["state"] == expected)
  }

  /// The coalescer weighs a merged patch against the subscribed value: elements left to the
  /// state count a node each, so a view that outweighs the operations is not encoded to learn
  /// it (which cost a whole encoding per check, on the path of every edit).
  @Test func weighingAMergedPatchEncodesNoElement() throws {
    let (connection, queue) = connection()
    _ = try send(
      request(1, "store/open", ["feature": "rows", "store": "r", "state": ["rows": rows(2_500)]]),
      to: connection, queue)
    let coalescer = Coalescer(registry: connection.registry)
    let operation: JSON = ["op": "replace", "path": "/rows/1/text", "value": "x"]
    var notice = PatchNotice(
      store: "r", path: "", from: 0, to: 0, operations: Array(repeating: operation, count: 40),
      cause: nil)
    notice.weight = PatchNotice.weight(of: notice.operations)
    let before = Rows.Row.encoded.load(ordering: .relaxed)
    coalescer.compact(&notice)
    #expect(Rows.Row.encoded.load(ordering: .relaxed) == before)
    #expect(notice.operations.count == 40)
    // A value lighter than the operations is still compacted: one row, encoded alone.
    var one = PatchNotice(
      store: "r", path: "/rows/1", from: 0, to: 0,
      operations: Array(repeating: operation, count: 40), cause: nil)
    one.weight = PatchNotice.weight(of: one.operations)
    coalescer.compact(&one)
    #expect(Rows.Row.encoded.load(ordering: .relaxed) == before + 1)
    #expect(one.operations.count == 1)
  }

  /// Acknowledged means durable: a large view written while it is sent goes out only after the
  /// turn's changes are committed, and a commit that fails answers with the error instead.
  @Test func aLargeViewWhoseStoreCouldNotBeSavedIsAnsweredWithTheError() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let (connection, queue, persistence, opened) = try persistedRows(in: directory)
    #expect(opened.count == 1 && opened[0].1 && opened[0].0["result"]?["version"] == 0)
    let saboteur = try SQLiteConnection(path: try #require(persistence.databasePath))
    try saboteur.execute(
      """
      CREATE TRIGGER refuse BEFORE INSERT ON journal
      BEGIN SELECT RAISE(ABORT, 'the disk says no'); END
      """)
    let edit: JSON = ["type": "edit", "id": "r7", "text": "lost"]
    let turn: [InboundLine] = [
      .message(request(2, "dispatch", ["store": "r", "action": edit])),
      .message(request(3, "state/get", ["store": "r"])),
    ]
    connection.receive(turn)
    var answers: [JSON] = []
    while let batch = queue.takeQueued() {
      for line in batch where line.responseID != nil { answers.append(line.json) }
    }
    #expect(answers.map { $0["id"] } == [2, 3])
    for answer in answers {
      #expect(answer["error"]?["code"] == -32603)
      let reason = answer["error"]?["data"]?["reason"]?.stringValue ?? ""
      #expect(reason.contains("could not be saved"))
    }
    try saboteur.execute("DROP TRIGGER refuse")
    let saved = try send(request(4, "state/get", ["store": "r"]), to: connection, queue)
    #expect(saved[0].1 && saved[0].0["result"]?["state"]?["rows"]?[7]?["text"] == "lost")
  }

  /// A large array replaced whole (an action, a rewind) reaches the client as one `replace`
  /// whose value is written from the state while the line is sent (`HeldValue`,
  /// `OutputBuffer.stream(_:held:)`): a mirror that applies it has the state; history's entry has the
  /// value too; a persisted store saves the whole state, and a restart restores it.
  @Test func aLargeArrayReplacedWholeIsPatchedFromText() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    let (connection, queue, _, opened) = try persistedRows(in: directory)
    var mirror = try #require(opened[0].0["result"]?["state"])
    _ = try send(request(2, "state/subscribe", ["store": "r"]), to: connection, queue)
    /// Applies the patches among `lines` to the mirror; returns the streamed ones.
    func follow(_ lines: [(JSON, Bool)]) throws -> [JSON] {
      var streamed: [JSON] = []
      for (line, fromText) in lines where line["method"] == "state/patch" {
        try JSONPatch(json: line["params"]?["patch"] ?? .null).apply(to: &mirror)
        if fromText { streamed.append(line) }
      }
      return streamed
    }
    let reversed = try follow(
      send(
        request(3, "dispatch", ["store": "r", "action": ["type": "reverse"]]), to: connection,
        queue))
    #expect(reversed.count == 1)
    #expect(reversed.first?["params"]?["patch"]?[0]?["path"] == "/rows")
    #expect(reversed.first?["params"]?["patch"]?[0]?["value"]?[0]?["id"] == "r2499")
    #expect(reversed.first?["params"]?["from"] == 0 && reversed.first?["params"]?["to"] == 1)
    let state = try send(request(4, "state/get", ["store": "r"]), to: connection, queue)
    #expect(state[0].0["result"]?["state"] == mirror)
    // History keeps the entry's patch with its value (encoded when read).
    let entries = try send(request(5, "history/get", ["store": "r"]), to: connection, queue)
    let last = entries[0].0["result"]?["entries"]?.arrayValue?.last
    #expect(last?["patch"] == reversed.first?["params"]?["patch"])
    // The change was saved as a whole state, which a restart restores.
    let database = SnapshotDatabase(directory: directory, warn: { _ in })
    #expect(try database.journalCount(store: "r") == 0)
    let restored = Persistence(stateDirectory: directory, warn: { _ in }).restore(
      storeID: "r", feature: "rows", schemaVersion: 1)
    #expect(restored?.version == 1)
    #expect(restored?.state["rows"]?[0]?["id"] == "r2499")
    // A rewind replaces the rows whole too.
    let rewound = try follow(
      send(request(6, "store/rewind", ["store": "r", "version": 0]), to: connection, queue))
    #expect(rewound.count == 1)
    #expect(mirror == ["title": "rows", "rows": rows(2_500)])
    let again = try send(request(7, "state/get", ["store": "r"]), to: connection, queue)
    #expect(again[0].0["result"]?["state"] == mirror)
  }

  /// A subscription to one row gets that row of a whole replacement, encoded alone: the held
  /// value is never encoded for it. One to a part the replacement is inside of gets it whole.
  @Test func aRowsSubscriberOfAWholeReplacementGetsItsRowAlone() throws {
    let (connection, queue) = connection()
    _ = try send(request(1, "initialize", ["subscribe": "none"]), to: connection, queue)
    _ = try send(
      request(2, "store/open", ["feature": "rows", "store": "r", "state": ["rows": rows(2_500)]]),
      to: connection, queue)
    _ = try send(
      request(3, "state/subscribe", ["store": "r", "path": "/rows/7"]), to: connection, queue)
    let before = Rows.Row.encoded.load(ordering: .relaxed)
    let lines = try send(
      request(4, "dispatch", ["store": "r", "action": ["type": "reverse"]]), to: connection, queue)
    #expect(Rows.Row.encoded.load(ordering: .relaxed) - before < 10, "the row alone encoded")
    let patches = lines.filter { $0.0["method"] == "state/patch" }
    #expect(patches.count == 1 && !patches[0].1)
    let row: JSON = ["id": "r2492", "text": .string(text(2492))]
    #expect(
      patches.first?.0["params"]?["patch"] == [["op": "replace", "path": "/rows/7", "value": row]])
    // A subscription to the rows themselves gets them written from the state, as the root does.
    _ = try send(
      request(5, "state/unsubscribe", ["store": "r", "path": "/rows/7"]), to: connection, queue)
    _ = try send(
      request(6, "state/subscribe", ["store": "r", "path": "/rows"]), to: connection, queue)
    let again = try send(
      request(7, "dispatch", ["store": "r", "action": ["type": "reverse"]]), to: connection, queue)
    let whole = again.filter { $0.0["method"] == "state/patch" }
    #expect(whole.count == 1 && whole[0].1)
    #expect(
      whole.first?.0["params"]?["patch"] == [
        ["op": "replace", "path": "/rows", "value": rows(2_500)]
      ])
    #expect(whole.first?.0["params"]?["path"] == "/rows")
  }

  /// Random edits, whole replacements, rewinds and skips through a connection: a mirror that
  /// applies every patch, streamed or not, is the state after each of them.
  @Test func aMirrorFollowsRandomReplacementsRewindsAndSkips() throws {
    let (connection, queue) = connection()
    let opened = try send(
      request(1, "store/open", ["feature": "rows", "store": "r", "state": ["rows": rows(1_500)]]),
      to: connection, queue)
    var mirror = try #require(opened[0].0["result"]?["state"])
    _ = try send(request(2, "state/subscribe", ["store": "r"]), to: connection, queue)
    var random: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next(_ bound: Int) -> Int {
      random = random &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((random >> 33) % UInt64(bound))
    }
    var streamed = 0
    var refused = 0
    var skips = 0
    for step in 0..<60 {
      let id = 100 + step
      let version = try #require(
        try send(
          request(id * 10, "state/get", ["store": "r", "path": "/title"]), to: connection, queue
        )
        .first?.0["result"]?["version"]?.integerValue)
      let line: JSON
      switch next(5) {
      case 0:
        line = request(id, "dispatch", ["store": "r", "action": ["type": "reverse"]])
      case 1 where version > 0:
        line = request(
          id, "store/rewind", ["store": "r", "version": .integer(Int64(next(Int(version))))])
      case 2 where version > 0:
        line = request(
          id, "history/skip",
          ["store": "r", "version": .integer(Int64(1 + next(Int(version)))), "skipped": true])
      case 3:
        line = request(
          id, "dispatch", ["store": "r", "action": ["type": "title", "_0": .string("t\(step)")]])
      default:
        let row = next(1_500)
        line = request(
          id, "dispatch",
          [
            "store": "r",
            "action": ["type": "edit", "id": .string("r\(row)"), "text": .string("s\(step)")],
          ])
      }
      let lines = try send(line, to: connection, queue)
      let served = !lines.contains { $0.0["error"] != nil }
      if line["method"] == "history/skip" {
        if served { skips += 1 }
      } else if !served {
        refused += 1
      }
      for (message, fromText) in lines where message["method"] == "state/patch" {
        try JSONPatch(json: message["params"]?["patch"] ?? .null).apply(to: &mirror)
        if fromText { streamed += 1 }
      }
      let state = try send(request(id * 10 + 1, "state/get", ["store": "r"]), to: connection, queue)
      #expect(state.first?.0["result"]?["state"] == mirror, "step \(step): \(line)")
    }
    #expect(streamed > 5, "whole replacements were streamed")
    // A skip is refused for a version no action made, and before a rewind (`-32005`).
    #expect(refused == 0 && skips > 0, "the steps were served")
  }

  @Test func aSmallViewIsAnsweredAsBefore() throws {
    let (connection, queue) = connection()
    let opened = try send(
      request(1, "store/open", ["feature": "rows", "store": "r", "state": ["rows": rows(3)]]),
      to: connection, queue)
    #expect(!opened[0].1)
    #expect(opened[0].0["result"]?["state"] == ["title": "rows", "rows": rows(3)])
  }
}

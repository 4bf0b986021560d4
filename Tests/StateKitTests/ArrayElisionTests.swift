import JSON
import Testing

@testable import StateKit

/// A publisher that leaves an `IdentifiedArray`'s elements to the state (`ArrayElision`) must
/// publish what a publisher keeping the whole view as JSON publishes: the same patches (but for
/// a reset or a log that no longer reaches back, where it replaces the array whole), the same
/// values for `state/get` and its paths, the same past views and rewinds, the same journal.
/// Each test runs a store that keeps every element (threshold `Int.max`, the reference) next
/// to one that keeps none (threshold 0) through the same random edits.
@StateActor
@Suite struct ArrayElisionTests {
  private func store(threshold: Int, history: Bool = false) -> Store<Shelf> {
    let store = ArrayElision.$threshold.withValue(threshold) { Store(feature: Shelf()) }
    if history { store.startHistory(limit: 1000, sink: nil) }
    return store
  }

  /// Adds, inserts, removes, renames, in-place edits, tags, sorts and clears over a dozen ids,
  /// and a batch of 600 appends (more changes than an array's log keeps).
  private func randomActions(seed: UInt64, count: Int) -> [Shelf.Action] {
    var generator = SplitMix(seed: seed)
    var actions: [Shelf.Action] = []
    for _ in 0..<count {
      let id = "k\(generator.next() % 12)"
      switch generator.next() % 12 {
      case 0, 1: actions.append(.add(id: id, title: "t\(generator.next() % 5)", at: nil))
      case 2: actions.append(.add(id: id, title: "front", at: Int(generator.next() % 4)))
      case 3: actions.append(.remove(id: id))
      case 4, 5: actions.append(.rename(id: id, title: "r\(generator.next() % 3)"))
      case 6: actions.append(.copies(id: id, delta: Int(generator.next() % 3)))
      case 7: actions.append(.tag(id: id, tag: "g"))
      case 8: actions.append(generator.next() % 2 == 0 ? .edit(id: id) : .select(id: id))
      case 9: actions.append(generator.next() % 6 == 0 ? .sort : .note("n\(generator.next() % 2)"))
      case 10: actions.append(generator.next() % 40 == 0 ? .batch(count: 600) : .log("l"))
      default: actions.append(generator.next() % 12 == 0 ? .clear : .rename(id: id, title: "x"))
      }
    }
    return actions
  }

  /// Whether `action` resets the array (its log cannot say what moved: published whole).
  private func resets(_ action: Shelf.Action) -> Bool {
    switch action {
    case .sort, .clear, .batch: return true
    default: return false
    }
  }

  @Test func theFirstViewKeepsNoElementOfALeftOutArray() throws {
    let store = ArrayElision.$threshold.withValue(10) {
      Store(
        feature: Shelf(),
        state: Shelf.State(
          books: IdentifiedArray((0..<50).map { Shelf.Book(id: "b\($0)", title: "B", copies: 1) })))
    }
    #expect(store.publisher.json["books"] == [])
    #expect(
      store.publisher.leftOutElements() == 50
        && store.publishedElementsLeftOut(under: "/books") == 50
        && store.publishedElementsLeftOut(under: "/stats") == 0)
    let expected = try JSONValueEncoder().encode(Shelf().view(of: store.state))
    #expect(store.published == expected)
    // Below the threshold, the array is kept whole, as before.
    let small = ArrayElision.$threshold.withValue(100) {
      Store(feature: Shelf(), state: store.state)
    }
    #expect(small.publisher.json == expected)
    #expect(small.publisher.leftOutElements() == 0)
  }

  @Test func randomEditsPublishWhatTheWholeJSONPublishes() throws {
    for seed in [1, 2, 3] as [UInt64] {
      let whole = store(threshold: Int.max)
      let leftOut = store(threshold: 0)
      var wholePatches: [[JSON]] = []
      var leftOutPatches: [[JSON]] = []
      var held = 0
      whole.observer = { wholePatches.append($0.patch) }
      leftOut.observer = { [unowned leftOut] publication in
        held += Self.checkHeld(publication, leftOut.heldValues)
        leftOutPatches.append(
          (try? publication.filled(with: leftOut.heldValues)) ?? publication.patch)
      }
      var document = leftOut.published
      var generator = SplitMix(seed: seed &+ 100)
      var versionGap: UInt64 = 0
      for action in randomActions(seed: seed, count: 400) {
        wholePatches.removeAll()
        leftOutPatches.removeAll()
        let before = try JSONValueEncoder().encode(Shelf().view(of: leftOut.state))
        whole.send(action)
        leftOut.send(action)
        let expected = try JSONValueEncoder().encode(Shelf().view(of: leftOut.state))
        if !resets(action) {
          #expect(leftOutPatches == wholePatches, "after \(action)")
        }
        for patch in leftOutPatches { try JSONPatch(json: .array(patch)).apply(to: &document) }
        #expect(document == expected, "after \(action): \(leftOutPatches)")
        #expect(leftOut.published == expected, "after \(action)")
        // A log that no longer reaches back leaves nothing to compare with: the array is
        // replaced, changed or not, and the version moves (the only difference allowed).
        if !resets(action) {
          #expect(leftOut.version - whole.version == versionGap, "after \(action)")
        }
        versionGap = leftOut.version - whole.version
        #expect(leftOut.publisher.json["books"] == [], "after \(action)")
        // An edit of one element is the diff of its encodings, as the whole JSON gives it.
        if case .rename = action, leftOutPatches.count == 1 {
          #expect(
            leftOutPatches[0] == JSONPatch.diff(from: before, to: expected).operations.map(\.json))
        }
        try checkPaths(of: leftOut, against: expected, generator: &generator)
        // Written as text a batch of elements at a time (an answer carrying the whole view).
        var writer = JSONWriter()
        try leftOut.writePublished(to: &writer)
        #expect(try writer.withUnsafeBytes { try JSON(parsing: Array($0)) } == expected)
        var batched = JSONWriter()
        try leftOut.publisher.write(Shelf().view(of: leftOut.state), to: &batched, batch: 7)
        #expect(try batched.withUnsafeBytes { try JSON(parsing: Array($0)) } == expected)
        // And by two threads, to the same bytes (`ElementPipeline`).
        var twoThreads = JSONWriter()
        try leftOut.publisher.write(
          Shelf().view(of: leftOut.state), to: &twoThreads, batch: 7, twoThreadsFrom: 0)
        #expect(
          twoThreads.withUnsafeBytes { Array($0) } == batched.withUnsafeBytes { Array($0) })
      }
      #expect(held > 0, "the actions replaced the left-out array whole")
    }
  }

  /// Checks a publication's held values (`HeldValue`, the store's while its observer runs):
  /// each stands for an operation without a value, and its text is its encoding. Returns how
  /// many it holds.
  private static func checkHeld(_ publication: Publication, _ held: [HeldValue]) -> Int {
    for value in held {
      #expect(HeldValue.isHeld(publication.patch[value.operation]))
      #expect(publication.patch[value.operation]["path"]?.stringValue == value.path.description)
      var writer = JSONWriter()
      #expect(throws: Never.self) { try value.write(to: &writer) }
      let text = writer.withUnsafeBytes { Array($0) }
      #expect((try? JSON(parsing: text)) == (try? value.encoded()))
    }
    #expect(publication.patch.filter(HeldValue.isHeld).count == held.count)
    return held.count
  }

  /// `state/get` with a path, the coalescer's and a subscription's lookups: one element
  /// encoded, the same values as the whole JSON has.
  private func checkPaths(
    of store: Store<Shelf>, against expected: JSON, generator: inout SplitMix
  ) throws {
    let count = store.state.books.count
    var paths: [JSONPointer] = ["", "/books", "/books/-", "/books/01", "/stats/total", "/mode"]
    for _ in 0..<4 {
      let index = Int(generator.next() % UInt64(count + 2))
      let field = ["", "/title", "/tags", "/tags/0", "/nothing"][Int(generator.next() % 5)]
      paths.append(try JSONPointer(parsing: "/books/\(index)\(field)"))
    }
    for path in paths {
      #expect(store.publishedValue(at: path) == path.value(in: expected), "at \(path)")
      #expect(store.hasPublishedValue(at: path) == (path.value(in: expected) != nil), "at \(path)")
      #expect(
        store.publishedValueIsObject(at: path) == (path.value(in: expected)?.objectValue != nil),
        "at \(path)")
    }
  }

  @Test func pastViewsAndRewindsAreThoseOfTheWholeJSON() throws {
    let store = store(threshold: 0, history: true)
    var views: [UInt64: JSON] = [0: store.published]
    // Each version's patch as it was sent, to compare with history's entries, which keep a held
    // value's place only (and encode it from the view at their version when read).
    var sent: [UInt64: [JSON]] = [:]
    var held = 0
    store.observer = { [unowned store] publication in
      held += Self.checkHeld(publication, store.heldValues)
      sent[publication.to] = (try? publication.filled(with: store.heldValues)) ?? publication.patch
    }
    for action in randomActions(seed: 7, count: 300) {
      store.send(action)
      views[store.version] = try JSONValueEncoder().encode(Shelf().view(of: store.state))
    }
    #expect(held > 0, "the actions replaced the left-out array whole")
    let first = try #require(store.firstHeldVersion)
    for version in first...store.version {
      #expect(try store.published(at: version) == views[version], "version \(version)")
    }
    let entries = store.historyEntries(since: nil, limit: 1000)
    #expect(entries.count > 100)
    for entry in entries where entry.version > 0 && !entry.patch.isEmpty {
      #expect(entry.patch == sent[entry.version], "entry at version \(entry.version)")
    }
    // Rewinds, each one a new version whose view is the old one's.
    var generator = SplitMix(seed: 9)
    for _ in 0..<5 {
      let target = first + generator.next() % (store.version - first + 1)
      var patches: [[JSON]] = []
      store.observer = { [unowned store] in
        patches.append((try? $0.filled(with: store.heldValues)) ?? $0.patch)
      }
      var document = store.published
      try store.rewind(to: target, cause: nil)
      #expect(store.historyEntries(since: store.version - 1, limit: 1).last?.patch == patches.last)
      for patch in patches { try JSONPatch(json: .array(patch)).apply(to: &document) }
      #expect(store.published == views[target], "rewind to \(target)")
      #expect(document == views[target], "rewind to \(target)")
      views[store.version] = views[target]
    }
    for version in first...store.version {
      #expect(try store.published(at: version) == views[version], "version \(version)")
    }
  }

  /// A past view held apart (`Store.pastView(at:)`, the state reduced again from the
  /// checkpoint) is the view published then, written whole or read at a path; after a skip,
  /// the versions before it are left to the reversals, which still give the views published.
  @Test func heldPastViewsAreThoseOfTheWholeJSON() throws {
    let store = store(threshold: 0, history: true)
    var views: [UInt64: JSON] = [0: store.published]
    for action in randomActions(seed: 11, count: 200) + [.add(id: "last", title: "l", at: nil)] {
      store.send(action)
      views[store.version] = try JSONValueEncoder().encode(Shelf().view(of: store.state))
    }
    let first = try #require(store.firstHeldVersion)
    var held = 0
    for version in first...store.version {
      guard let past = try store.pastView(at: version) else { continue }
      held += 1
      var writer = JSONWriter(capacity: 256)
      try past.write(to: &writer)
      let text = writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
      #expect(try JSON(parsing: text) == views[version], "version \(version)")
      for path in ["/books", "/books/0", "/books/0/title", "/books/9"] {
        let pointer = try JSONPointer(parsing: path)
        #expect(past.value(at: pointer) == views[version].flatMap(pointer.value(in:)), "\(path)")
      }
    }
    // Versions whose view left elements out (the array was not empty) were held apart.
    #expect(held > 0)
    // After a skip, every version before it keeps the view it published (the skipped action's
    // too), held apart or walked back.
    let skipped = try #require(store.historyEntries(since: first, limit: 1000).last?.version)
    try store.skip(entryAt: skipped, skipped: true, cause: nil)
    views[store.version] = try JSONValueEncoder().encode(Shelf().view(of: store.state))
    #expect(views[store.version] != views[skipped])
    for version in [first, skipped - 1, skipped, store.version] {
      var writer = JSONWriter(capacity: 256)
      try #require(try store.pastView(at: version)).write(to: &writer)
      let text = writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
      #expect(try JSON(parsing: text) == views[version], "version \(version) after the skip")
      #expect(try store.published(at: version) == views[version], "version \(version)")
    }
  }

  /// A whole replacement found by the walk the owed actions force (the view changed too): the
  /// publication leaves the state's patch owed, and the commit's walk asks for the whole state,
  /// never a patch of the array's tree.
  @Test func aWholeReplacementInAForcedWalkOwesTheWholeState() throws {
    let store = store(threshold: 0)
    ArrayElision.$threshold.withValue(0) { store.journalState() }
    for n in 0..<20 { store.send(.add(id: "b\(n)", title: "t\(20 - n)", at: nil)) }
    _ = store.takeStatePatch()
    var statePatches: [[JSON]?] = []
    store.observer = { statePatches.append($0.statePatch) }
    for n in 0..<Store<Shelf>.maximumOwedActions { store.send(.log("l\(n)")) }
    #expect(statePatches.allSatisfy { $0 == nil }, "owed")
    statePatches.removeAll()
    store.send(.sort)
    #expect(statePatches.count == 1 && statePatches[0] == nil, "the forced walk left it owed")
    #expect(store.takeStatePatch() == nil, "the whole state")
    #expect(store.journaledState == (try JSONValueEncoder().encode(store.state)))
    #expect(store.takeStatePatch() == [], "once")
  }

  /// An edit under a left-out array is taken back from the log: no rebuild from the
  /// checkpoint (its reversal is complete), unless the array was replaced whole.
  @Test func anElementsEditIsTakenBackFromTheLog() throws {
    let store = store(threshold: 0, history: true)
    store.send(.add(id: "a", title: "A", at: nil))
    store.send(.add(id: "b", title: "B", at: 0))
    store.send(.rename(id: "a", title: "A2"))
    store.send(.remove(id: "b"))
    let log = try #require(store.history)
    for entry in log.held { #expect(entry.reversal.isComplete, "entry \(entry.seq)") }
    #expect(
      log.view(at: 2, from: store.published)?["books"] == [
        ["id": "b", "title": "B", "copies": 1, "tags": []],
        ["id": "a", "title": "A", "copies": 1, "tags": []],
      ])
    store.send(.add(id: "z", title: "0", at: nil))
    store.send(.sort)
    #expect(log.held.last?.reversal.isComplete == false)
    // That version comes back all the same: rebuilt from the checkpoint.
    #expect(try store.published(at: 2)["books"]?.arrayValue?.count == 2)
  }

  /// A private state that is not the view has its own publisher for the journal: the same
  /// elision, the same state patches and the state itself when asked.
  @Test func theJournalOfAPrivateStateIsTheWholeJSONs() async throws {
    let store = store(threshold: 0)
    ArrayElision.$threshold.withValue(0) { store.journalState() }
    var document = store.journaledState
    var wholeStates = 0
    for (number, action) in randomActions(seed: 11, count: 300).enumerated() {
      store.send(action)
      if let patch = store.takeStatePatch() {
        try JSONPatch(json: .array(patch)).apply(to: &document)
      } else {
        // A large array replaced whole: the journal writes the whole state instead.
        wholeStates += 1
        document = store.journaledState
      }
      let expected = try JSONValueEncoder().encode(store.state)
      #expect(document == expected, "after \(action)")
      #expect(store.journaledState == expected, "after \(action)")
      var writer = JSONWriter()
      try store.writeJournaledState(to: &writer)
      let written = writer.withUnsafeBytes { Array($0) }
      #expect(try JSON(parsing: written) == expected)
      guard number % 30 == 0 else { continue }
      // Held apart and written on another thread, as a compaction does, after the store moved
      // on: the text of the state when it was taken.
      let text = store.journaledStateText()
      store.send(.add(id: "later", title: "after the text was taken", at: 0))
      _ = store.takeStatePatch()
      let apart = try await Task.detached {
        var writer = JSONWriter()
        try text(&writer)
        return writer.withUnsafeBytes { Array($0) }
      }.value
      #expect(apart == written)
      store.send(.remove(id: "later"))
      _ = store.takeStatePatch()
      document = store.journaledState
    }
    #expect(wholeStates > 0, "the actions reset the array")
  }
}

import JSON
import StateKitTesting
import Testing

@testable import StateKit

/// A feature that keeps the time stamp each reduce saw, to check that time travel and replay
/// give the reducer the recorded time again.
private struct Stamper: Feature {
  struct State: Codable, Equatable, Sendable {
    var stamps: [Int64] = []
  }
  enum Action: Codable, Equatable, Sendable {
    case stamp
  }
  static let name = "stamper"
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    state.stamps.append(ReduceTime.current ?? -1)
    return .none
  }
}

/// A pile of strings: a container the reducer edits in place.
private struct Pile: Feature {
  struct State: Codable, Equatable, Sendable {
    var items: [String] = []
  }
  enum Action: Codable, Equatable, Sendable {
    case put(item: String)
  }
  static let name = "pile"
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    if case .put(let item) = action { state.items.append(item) }
    return .none
  }
}

/// A feature whose every action starts an effect that waits on a test clock: reducing its
/// actions again for a past state must start none of them.
private struct Spawner: Feature {
  struct State: Codable, Equatable, Sendable {
    var count = 0
    var seen: [Int] = []
  }
  enum Action: Codable, Equatable, Sendable {
    case bump
  }
  static let name = "spawner"
  let clock: TestClock
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    state.count += 1
    state.seen.append(state.count)
    return .run { [clock] _ in try? await clock.sleep(for: .seconds(3600)) }
  }
}

/// History in the store: the bounded log, its checkpoint, the state at a past version, rewind.
@StateActor
@Suite struct HistoryTests {
  /// A counter store with history, driven through a fixed, varied script; returns the store
  /// and the view published at each version.
  private func recordedCounter(limit: Int, actions count: Int) throws -> (
    Store<Counter>, [UInt64: JSON]
  ) {
    let store = Store(feature: Counter())
    store.startHistory(limit: limit, sink: nil)
    var views: [UInt64: JSON] = [0: store.published]
    for step in 0..<count {
      // Increments (with a milestone event every tenth), a set, and a no-op that keeps the
      // version: entries that share a version and entries without a patch.
      switch step % 5 {
      case 3: store.send(.set(value: step * 7 % 23))
      case 4: store.send(.noop)
      default: store.send(.increment)
      }
      views[store.version] = store.published
    }
    return (store, views)
  }

  @Test func everyVersionHistoryHoldsComesBackAsPublished() throws {
    let (store, views) = try recordedCounter(limit: 1000, actions: 400)
    #expect(store.firstHeldVersion == 0)
    #expect(store.version > 128)
    // Versions on both sides of each snapshot boundary, and all the others.
    for version in 0...store.version {
      #expect(try store.published(at: version) == views[version], "version \(version)")
    }
  }

  @Test func theCheckpointMovesAndEntriesLeaveAnIntervalAtATime() throws {
    let (store, views) = try recordedCounter(limit: 64, actions: 200)
    let log = try #require(store.history)
    // Entries leave 64 at a time once 128 are held: after entries 128 and 192.
    #expect(log.baseSeq == 128)
    #expect(log.count == 200 - 128)
    // The checkpoint is the state after its entry: the entries that left were reduced onto it,
    // so it publishes the view at the first version held.
    let base = try #require(store.historyBase)
    #expect(try JSONValueEncoder().encode(Counter().view(of: base)) == views[log.firstVersion])
  }

  @Test func everyEntryThatChangedTheViewKeepsWhatTakesItBack() throws {
    let (store, _) = try recordedCounter(limit: 1000, actions: 400)
    let entries = try #require(store.history).held
    #expect(entries.count == 400)
    for entry in entries {
      #expect(entry.patch.isEmpty == entry.reversal.isEmpty, "entry \(entry.seq)")
    }
    // Taken by the entries as they are kept: the publisher holds none between them.
    #expect(store.publisher.takeReversal().isEmpty)
  }

  @Test func pastViewsAreTheViewNowTakenBackEntryByEntry() throws {
    // Logs of several sizes past their bound: every version held, the oldest ones included
    // (the checkpoint's), comes from the view now with the later entries taken back, equal to
    // what was published then.
    for (limit, actions) in [(300, 2000), (64, 500), (10, 333), (1000, 1500)] {
      let (store, views) = try recordedCounter(limit: limit, actions: actions)
      let log = try #require(store.history)
      let first = try #require(store.firstHeldVersion)
      #expect(log.firstVersion == first)
      for version in first...store.version {
        #expect(
          log.view(at: version, from: store.published) == views[version],
          "limit \(limit), version \(version)")
        #expect(try store.published(at: version) == views[version])
      }
      #expect(throws: HistoryError.evicted(oldest: first)) { try store.published(at: first - 1) }
    }
  }

  @Test func pastViewsAreTakenBackAcrossARewind() throws {
    let store = Store(feature: Pile())
    store.startHistory(limit: 1000, sink: nil)
    var views: [UInt64: JSON] = [0: store.published]
    for index in 0..<150 {
      store.send(.put(item: "item \(index)"))
      views[store.version] = store.published
    }
    try store.rewind(to: 70, cause: nil)
    views[store.version] = store.published
    for index in 150..<200 {
      store.send(.put(item: "item \(index)"))
      views[store.version] = store.published
    }
    let log = try #require(store.history)
    // Versions before the rewind are taken back through the rewind's own reversal.
    for version in 0...store.version {
      #expect(log.view(at: version, from: store.published) == views[version], "version \(version)")
    }
  }

  @Test func theCheckpointMovesWithTheLogAndIsItsOwnValue() throws {
    let store = Store(feature: Pile())
    store.startHistory(limit: 10, sink: nil)
    for index in 0..<100 { store.send(.put(item: "item \(index)")) }
    let base = try #require(store.historyBase)
    #expect(base.items == (0..<90).map { "item \($0)" })
    #expect(store.state.items.count == 100)
    #expect(try store.state(at: 95).items == (0..<95).map { "item \($0)" })
    #expect(try store.state(at: 90).items == base.items)
    #expect(throws: HistoryError.evicted(oldest: 90)) { try store.state(at: 89) }
  }

  @Test func theStateAfterARewindCanBeTheCheckpoint() throws {
    let store = Store(feature: Pile())
    store.startHistory(limit: 3, sink: nil)
    for index in 0..<5 { store.send(.put(item: "\(index)")) }
    #expect(try store.rewind(to: 2, cause: nil) == 6)
    for index in 5..<9 { store.send(.put(item: "\(index)")) }
    #expect(store.version == 10)
    // Entries leave 3 at a time: the state after the rewind (entry 6) is now the checkpoint,
    // the state the rewind restored.
    #expect(store.history?.baseSeq == 6)
    #expect(store.historyBase?.items == ["0", "1"])
    #expect(try store.state(at: 6).items == ["0", "1"])
    #expect(try store.state(at: 7).items == ["0", "1", "5"])
    #expect(try store.state(at: 9).items == ["0", "1", "5", "6", "7"])
  }

  @Test func theLogKeepsTheLimitAndFewerThanAnIntervalMore() throws {
    let (store, views) = try recordedCounter(limit: 100, actions: 1000)
    let log = try #require(store.history)
    // Entries leave 64 at a time; 896 is the last whose successors reach 100.
    #expect(log.count == 1000 - 896)
    #expect(store.historyEntries(since: nil, limit: 1000).count == log.count)
    let (more, _) = try recordedCounter(limit: 100, actions: 1000)
    for step in 0..<150 {
      more.send(.increment)
      let count = try #require(more.history?.count)
      #expect(count >= 100 && count < 164, "\(step) actions later")
    }
    let first = try #require(store.firstHeldVersion)
    #expect(first == log.baseVersion)
    #expect(first > 0)
    #expect(try store.published(at: first) == views[first])
    #expect(try store.published(at: store.version - 1) == views[store.version - 1])
    #expect(throws: HistoryError.evicted(oldest: first)) { try store.state(at: first - 1) }
    #expect(throws: HistoryError.future(current: store.version)) {
      try store.state(at: store.version + 1)
    }
  }

  @Test func aLimitOfOneStillProducesThePreviousVersion() throws {
    let (store, views) = try recordedCounter(limit: 1, actions: 100)
    let first = try #require(store.firstHeldVersion)
    #expect(store.history?.count == 1)
    for version in first...store.version {
      #expect(try store.published(at: version) == views[version])
    }
  }

  @Test func theOldestVersionHeldComesBackLongAfterTheLimitAndStartsNoEffect() async throws {
    let store = Store(feature: Spawner(clock: TestClock()))
    store.startHistory(limit: 100, sink: nil)
    for _ in 0..<1000 { store.send(.bump) }
    #expect(store.inFlightEffectCount == 1000)
    let first = try #require(store.firstHeldVersion)
    // Snapshots every 64 entries: 896 is the last whose successors reach the limit.
    #expect(first == 896)
    #expect(store.historyEntries(since: nil, limit: 1000).first?.version == first + 1)
    // Every version held: the oldest, both sides of each view boundary (960) and the current
    // one, from the checkpoint with the actions after it reduced again.
    for version in first...store.version {
      let past = try store.state(at: version)
      #expect(past.count == Int(version))
      #expect(past.seen == Array(1...Int(version)))
      #expect(try store.published(at: version) == JSONValueEncoder().encode(past))
    }
    #expect(throws: HistoryError.evicted(oldest: first)) { try store.state(at: first - 1) }
    // None of those reduces started an effect.
    #expect(store.inFlightEffectCount == 1000)

    // Rewinding to the oldest version cancels every effect and starts none.
    #expect(try store.rewind(to: first, cause: nil) == 1001)
    #expect(store.state.seen == Array(1...896))
    await store.idle()
    #expect(store.inFlightEffectCount == 0)
    // The restored state is its own value: editing it leaves the entries' states as they were.
    for _ in 0..<200 { store.send(.bump) }
    #expect(store.state.count == 1096)
    let oldest = try #require(store.firstHeldVersion)
    #expect(oldest > 1001)
    for version in oldest...store.version {
      #expect(try store.state(at: version).count == Int(version) - 105)
    }
    store.close()
  }

  @Test func pagesBySinceNeverSplitAVersion() throws {
    let (store, _) = try recordedCounter(limit: 1000, actions: 50)
    var seen: [UInt64] = []
    var since: UInt64? = nil
    while true {
      let page = store.historyEntries(since: since, limit: 3)
      guard let last = page.last else { break }
      seen += page.map(\.seq)
      #expect(page.allSatisfy { $0.version > (since ?? 0) || since == nil })
      since = last.version
    }
    #expect(seen == Array(1...50))
    // Entries after the version-less no-ops carry the same version as the one before them.
    let all = store.historyEntries(since: nil, limit: 1000)
    #expect(all.count == 50)
    #expect(all[4].version == all[3].version)
    #expect(all[4].patch.isEmpty)
    #expect(all[4].action() == ["type": "noop"])
  }

  @Test func replayAndTimeTravelGiveTheReducerItsRecordedTime() throws {
    let store = Store(feature: Stamper())
    store.startHistory(limit: 100, sink: nil)
    for _ in 0..<5 { store.send(.stamp) }
    let entries = store.historyEntries(since: nil, limit: 100)
    #expect(store.state.stamps == entries.map(\.at))
    #expect(try store.state(at: 3).stamps == Array(entries.prefix(3).map(\.at)))
    // Without history nothing is stamped: the reducer reads the real clock.
    let plain = Store(feature: Stamper())
    plain.send(.stamp)
    #expect(plain.state.stamps == [-1])
  }

  @Test func rewindCancelsEffectsAndNoLatePatchArrives() async throws {
    let clock = TestClock()
    let store = Store(feature: Ticker(clock: clock))
    store.startHistory(limit: 100, sink: nil)
    var publications: [Publication] = []
    store.observer = { publications.append($0) }
    store.send(.start)
    for _ in 0..<3 {
      await store.settleEffects()
      await clock.advance(by: .seconds(1))
    }
    await store.settleEffects()
    #expect(store.version == 3)
    #expect(store.inFlightEffectCount == 1)

    let version = try store.rewind(to: 1, cause: "r")
    #expect(version == 4)
    #expect(store.state.ticks == 1)
    #expect(publications.last?.patch == [["op": "replace", "path": "/ticks", "value": 1]])
    await store.idle()
    #expect(store.inFlightEffectCount == 0)
    await clock.advance(by: .seconds(5))
    await store.settleEffects()
    #expect(store.version == 4)
    #expect(publications.count == 4)

    let entries = store.historyEntries(since: nil, limit: 100)
    #expect(entries.last?.kind == .rewind(to: 1))
    #expect(entries.last?.origin.request == "r")
    let start = try #require(entries.first)
    #expect(start.effects.map(\.status) == [.cancelled])
    #expect(entries[1].origin.action == start.seq)
    // The state after the rewind is a snapshot: the versions before and after it still come back.
    #expect(try store.published(at: 3) == ["id": 0, "ticks": 3])
    #expect(try store.published(at: 4) == ["id": 0, "ticks": 1])
  }

  @Test func historyOffKeepsNothing() throws {
    let store = Store(feature: Counter())
    store.startHistory(limit: 0, sink: nil)
    store.send(.increment)
    #expect(!store.keepsHistory)
    #expect(store.firstHeldVersion == nil)
    #expect(throws: HistoryError.off) { try store.state(at: 0) }
  }

  @Test func aSinkHearsEveryEntryAndEffectEvenWithoutARing() async throws {
    let clock = TestClock()
    let store = Store(feature: Ticker(clock: clock))
    var records: [String] = []
    store.startHistory(limit: 0) { record in
      switch record {
      case .entry(let entry): records.append("entry \(entry.seq) v\(entry.version)")
      case .effect(_, let life): records.append("effect \(life.effect) \(life.status.rawValue)")
      }
    }
    store.send(.start)
    await store.settleEffects()
    await clock.advance(by: .seconds(1))
    await store.settleEffects()
    store.close()
    // The cancelled task ends on its own time; 30 s is only a failure bound.
    let deadline = ContinuousClock.now + .seconds(30)
    while records.count < 4 && ContinuousClock.now < deadline { await Task.yield() }
    #expect(
      records.prefix(4) == ["entry 1 v0", "effect 1 running", "entry 2 v1", "effect 1 cancelled"])
  }
}

import StateKit
@_spi(Testing) import StateKitTesting
import Testing

/// A feature with a long effect: imports `count` rows, one per second of its clock, reporting
/// its progress after each, and putting its state right when cancelled.
struct Importer: Feature {
  struct State: Codable, Equatable, Sendable {
    var imported = 0
    var importing = false
    var cancelled = false
  }
  enum Action: Codable, Equatable, Sendable {
    case start(count: Int)
    case quiet
    case row
    case finished
    case cancelled
  }

  static let name = "importer"

  let clock: any Clock<Duration>

  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .start(let count):
      state.importing = true
      return .run { [clock] send in
        await send.progress(done: 0, total: count, message: "Importing \(count) rows")
        for done in 1...count {
          try await clock.sleep(for: .seconds(1))
          await send(.row)
          await send.progress(done: done, total: count)
        }
        await send(.finished)
      }
      .onCancel(.cancelled)
    case .quiet:
      return .run { [clock] _ in try await clock.sleep(for: .seconds(1)) }
    case .row:
      state.imported += 1
      return .none
    case .finished:
      state.importing = false
      return .none
    case .cancelled:
      state.importing = false
      state.cancelled = true
      return .none
    }
  }
}

/// A parent embedding the importer: a mapped effect keeps its progress.
struct ImportScreen: Feature {
  struct State: Codable, Equatable, Sendable {
    var importer = Importer.State()
  }
  enum Action: Codable, Equatable, Sendable {
    case importer(Importer.Action)
  }

  static let name = "importScreen"

  let importer: Importer

  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .importer(let action):
      return importer.reduce(into: &state.importer, action: action).map(Action.importer)
    }
  }
}

@StateActor
@Suite struct ProgressTests {
  @Test func aLongEffectReportsBeginEachStepAndEndThroughTheTestStore() async {
    let clock = TestClock()
    let store = TestStore(feature: Importer(clock: clock))
    await store.send(.start(count: 2)) { $0.importing = true }
    #expect(store.progress == [.begin(done: 0, total: 2, message: "Importing 2 rows")])
    await clock.advance(by: .seconds(1))
    await store.receive(.row) { $0.imported = 1 }
    await clock.advance(by: .seconds(1))
    await store.receive(.row) { $0.imported = 2 }
    await store.receive(.finished) { $0.importing = false }
    await store.finish()
    #expect(
      store.progress == [
        .begin(done: 0, total: 2, message: "Importing 2 rows"), .report(done: 1, total: 2),
        .report(done: 2, total: 2), .end(done: 2, total: 2),
      ])
  }

  @Test func cancellingTheTransactionEndsItsProgressCancelledAndSendsOnCancel() async {
    let clock = TestClock()
    let store = Store(feature: Importer(clock: clock))
    var heard: [ProgressUpdate] = []
    let transaction = store.send(.start(count: 3))
    store.observeProgress(of: transaction) { heard.append($0) }
    await store.settleEffects()
    await clock.advance(by: .seconds(1))
    await store.settleEffects()
    #expect(heard.map(\.kind) == [.begin, .report])
    store.cancel(transaction)
    await store.settled(transaction)
    #expect(heard.last == .end(done: 1, total: 3, cancelled: true))
    #expect(store.state == Importer.State(imported: 1, importing: false, cancelled: true))
    #expect(!store.isRunning(transaction))
  }

  @Test func anEffectThatNeverReportsGivesNoProgress() async {
    let clock = TestClock()
    let store = TestStore(feature: Importer(clock: clock))
    await store.send(.quiet)
    await clock.advance(by: .seconds(1))
    await store.finish()
    #expect(store.progress.isEmpty)
  }

  @Test func aWatcherOfWorkThatNeverReportsHearsItsEndAlone() async {
    let clock = TestClock()
    let store = Store(feature: Importer(clock: clock))
    var heard: [ProgressUpdate] = []
    let transaction = store.send(.quiet)
    store.observeProgress(of: transaction) { heard.append($0) }
    await store.settleEffects()
    #expect(heard.isEmpty)  // still running: nothing to say yet
    await clock.advance(by: .seconds(1))
    await store.settled(transaction)
    #expect(heard == [.end(done: 0)])
    // Cancelled before it reported: the end says so.
    let cancelled = store.send(.quiet)
    store.observeProgress(of: cancelled) { heard.append($0) }
    store.cancel(cancelled)
    await store.settled(cancelled)
    #expect(heard.last == .end(done: 0, cancelled: true))
  }

  @Test func onCancelStaysSilentWhenTheWorkFinishes() async {
    let clock = TestClock()
    let store = TestStore(feature: Importer(clock: clock))
    await store.send(.start(count: 1)) { $0.importing = true }
    await clock.advance(by: .seconds(1))
    await store.receive(.row) { $0.imported = 1 }
    await store.receive(.finished) { $0.importing = false }
    await store.finish()  // an unexpected `.cancelled` would fail here
  }

  @Test func aMappedChildEffectKeepsItsProgress() async {
    let clock = TestClock()
    let store = TestStore(feature: ImportScreen(importer: Importer(clock: clock)))
    store.exhaustivity = .off
    await store.send(.importer(.start(count: 1)))
    await clock.advance(by: .seconds(1))
    await store.finish()
    #expect(store.progress.map(\.kind) == [.begin, .report, .end])
    #expect(store.progress.last == .end(done: 1, total: 1))
  }

  @Test func closingTheStoreEndsProgressThatBegan() async {
    let clock = TestClock()
    let store = Store(feature: Importer(clock: clock))
    var heard: [ProgressUpdate] = []
    let transaction = store.send(.start(count: 5))
    store.observeProgress(of: transaction) { heard.append($0) }
    await store.settleEffects()
    store.close()
    #expect(
      heard == [
        .begin(done: 0, total: 5, message: "Importing 5 rows"),
        .end(done: 0, total: 5, cancelled: true),
      ])
  }

  @Test func aWatcherOfATransactionWithNothingRunningHearsNothing() {
    let store = Store(feature: Importer(clock: TestClock()))
    let transaction = store.send(.row)
    var heard: [ProgressUpdate] = []
    store.observeProgress(of: transaction) { heard.append($0) }
    #expect(!store.isRunning(transaction))
    #expect(heard.isEmpty)
  }
}

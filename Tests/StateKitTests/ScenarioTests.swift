import StateKit
import StateKitTesting
import Testing

/// The seeds' data-flow scenarios, one test each, on `TestStore` and `TestClock`.
@StateActor
@Suite struct ScenarioTests {
  @Test func threeKeystrokesWithin300msSendOneSearchRequest() async {
    let clock = TestClock()
    let service = SearchService(clock: clock)
    let store = TestStore(feature: Search(service: service, clock: clock))

    await store.send(.queryChanged(query: "c")) {
      $0.query = "c"
      $0.isSearching = true
    }
    await clock.advance(by: .milliseconds(100))
    await store.send(.queryChanged(query: "ca")) { $0.query = "ca" }
    await clock.advance(by: .milliseconds(100))
    await store.send(.queryChanged(query: "cal")) { $0.query = "cal" }
    await clock.advance(by: .milliseconds(299))
    #expect(await service.requests == [])
    await clock.advance(by: .milliseconds(1))
    await clock.advance(by: .milliseconds(100))
    await store.receive(.internal(.results(query: "cal", items: ["calendar"]))) {
      $0.results = ["calendar"]
      $0.isSearching = false
    }
    #expect(await service.requests == ["cal"])
    await store.finish()
  }

  @Test func staleReplyIsDiscarded() async {
    let clock = TestClock()
    // "ca" answers after 2 s, "calendar" after 100 ms: the slow reply comes last.
    let service = SearchService(clock: clock, delays: ["ca": .seconds(2)])
    let store = TestStore(feature: Search(service: service, clock: clock))

    await store.send(.queryChanged(query: "ca")) {
      $0.query = "ca"
      $0.isSearching = true
    }
    await clock.advance(by: .milliseconds(300))
    #expect(await service.requests == ["ca"])
    await store.send(.queryChanged(query: "calendar")) { $0.query = "calendar" }
    await clock.advance(by: .milliseconds(400))
    await store.receive(.internal(.results(query: "calendar", items: ["calendar"]))) {
      $0.results = ["calendar"]
      $0.isSearching = false
    }
    // The "ca" request was cancelled; the service answered anyway, and nothing arrived.
    await clock.advance(by: .seconds(5))
    await store.finish()
    #expect(await service.requests == ["ca", "calendar"])
    #expect(store.state.results == ["calendar"])
  }

  @Test func refreshCancelsTheLoadInFlight() async {
    let clock = TestClock()
    let backend = ListBackend(clock: clock, script: [.success(["first"]), .success(["second"])])
    let store = TestStore(feature: Loader(backend: backend, clock: clock))

    await store.send(.load) { $0.load = .loading }
    await clock.advance(by: .milliseconds(500))
    await store.send(.refresh)
    await clock.advance(by: .seconds(1))
    await store.receive(.internal(.loaded(items: ["second"]))) {
      $0.load = .loaded
      $0.items = ["second"]
    }
    await store.finish()
    #expect(await backend.calls == 2)
  }

  @Test func cancellingASaveReturnsToIdleNotFailed() async {
    let clock = TestClock()
    let service = ProfileService(clock: clock)
    let store = TestStore(feature: Editor(service: service))

    await store.send(.save) { $0.save = .saving }
    await clock.advance(by: .milliseconds(500))
    await store.send(.cancelSave) { $0.save = .idle }
    await clock.advance(by: .seconds(2))
    // No .saveFailed: the cancellation reached the catch handler as nothing at all.
    await store.finish()
    #expect(store.state.save == .idle)
  }

  @Test func aSecondSaveWhileSavingStartsNoRequest() async {
    let clock = TestClock()
    let service = ProfileService(clock: clock)
    let store = TestStore(feature: Editor(service: service))

    await store.send(.save) { $0.save = .saving }
    await store.send(.save)
    await clock.advance(by: .seconds(1))
    await store.receive(.internal(.saved)) { $0.save = .saved }
    await store.finish()
    #expect(await service.saves == ["Ada"])
  }

  @Test func failingServiceIsRetriedWithBackoffThenFailsKeepingStaleData() async {
    let clock = TestClock()
    let backend = ListBackend(clock: clock, script: [.success(["kept"])])
    let store = TestStore(feature: Loader(backend: backend, clock: clock))

    await store.send(.load) { $0.load = .loading }
    await clock.advance(by: .seconds(1))
    await store.receive(.internal(.loaded(items: ["kept"]))) {
      $0.load = .loaded
      $0.items = ["kept"]
    }
    await backend.setScript([.success(["kept"]), .failure(BackendError())])

    await store.send(.refresh) { $0.load = .loading }
    await clock.advance(by: .seconds(1))  // attempt 1 fails
    await store.receive(.internal(.retrying(attempt: 1)))
    await clock.advance(by: .milliseconds(999))  // backoff 1 s: not yet
    #expect(await backend.calls == 2)
    await clock.advance(by: .milliseconds(1))
    await clock.advance(by: .seconds(1))  // attempt 2 fails
    await store.receive(.internal(.retrying(attempt: 2)))
    await clock.advance(by: .seconds(2))  // backoff 2 s
    await clock.advance(by: .seconds(1))  // attempt 3 fails: no more retries
    await store.receive(.internal(.failed)) {
      $0.load = .failed(message: Loader.failureMessage, recoverable: true)
      $0.isStale = true
    }
    await store.finish()
    #expect(await backend.calls == 4)
    #expect(store.state.items == ["kept"])
  }

  @Test func anEmptySuccessfulLoadIsLoadedAndEmptyNotFailed() async {
    let clock = TestClock()
    let backend = ListBackend(clock: clock, script: [.success([])])
    let store = TestStore(feature: Loader(backend: backend, clock: clock))

    await store.send(.load) { $0.load = .loading }
    await clock.advance(by: .seconds(1))
    await store.receive(.internal(.loaded(items: []))) { $0.load = .loaded }
    await store.finish()
  }

  @Test func childEffectsAreCancelledWhenTheChildIsRemoved() async {
    let clock = TestClock()
    let store = TestStore(feature: Board(clock: clock))

    await store.send(.add(id: 1)) { $0.tickers.append(Ticker.State(id: 1)) }
    await store.send(.add(id: 2)) { $0.tickers.append(Ticker.State(id: 2)) }
    await store.send(.ticker(id: 1, action: .start))
    await store.send(.ticker(id: 2, action: .start))
    #expect(store.store.inFlightEffectCount == 2)
    await clock.advance(by: .seconds(1))
    await store.receive(.ticker(id: 1, action: .internal(.tick))) { $0.tickers[id: 1]?.ticks = 1 }
    await store.receive(.ticker(id: 2, action: .internal(.tick))) { $0.tickers[id: 2]?.ticks = 1 }

    await store.send(.remove(id: 1)) { $0.tickers.remove(id: 1) }
    await clock.advance(by: .seconds(1))
    await store.receive(.ticker(id: 2, action: .internal(.tick))) { $0.tickers[id: 2]?.ticks = 2 }
    #expect(store.store.inFlightEffectCount == 1)

    await store.send(.remove(id: 2)) { $0.tickers.remove(id: 2) }
    await store.finish()
  }

  @Test func childEffectsAreCancelledEvenWhenTheChangeLogOverflows() async {
    let clock = TestClock()
    let store = TestStore(feature: Board(clock: clock), exhaustivity: .off)
    await store.send(.add(id: 1))
    await store.send(.add(id: 2))
    await store.send(.ticker(id: 1, action: .start))
    await store.send(.ticker(id: 2, action: .start))
    #expect(store.store.inFlightEffectCount == 2)
    await store.send(.rebuild(count: 600))
    await store.finish()
    #expect(store.store.inFlightEffectCount == 0)
    #expect(store.state.tickers.count == 600)
  }

  @Test func closingAStoreCancelsEverything() async {
    let clock = TestClock()
    let service = SearchService(clock: clock, delays: ["ca": .seconds(10)])
    let store = Store(feature: Search(service: service, clock: clock))
    let board = Store(feature: Board(clock: clock))
    store.send(.queryChanged(query: "ca"))
    board.send(.add(id: 1))
    board.send(.ticker(id: 1, action: .start))
    await store.settleEffects()
    await board.settleEffects()
    await clock.advance(by: .milliseconds(300))
    #expect(await service.requests == ["ca"])
    #expect(store.inFlightEffectCount == 2)  // the debounce and the request it started

    store.close()
    board.close()
    await store.idle()
    await board.idle()
    await clock.advance(by: .seconds(20))
    await waitUntil { store.inFlightEffectCount == 0 && board.inFlightEffectCount == 0 }
    #expect(store.inFlightEffectCount == 0)
    #expect(board.inFlightEffectCount == 0)
    #expect(store.state.results == [])
    #expect(board.state.tickers[id: 1]?.ticks == 0)
    // A closed store ignores what is sent to it.
    store.send(.queryChanged(query: "x"))
    #expect(store.state.query == "ca")
  }

  @Test func versionRisesOnlyOnAChange() async {
    let store = Store(feature: Counter())
    var publications: [Publication] = []
    store.observer = { publications.append($0) }
    store.send(.noop)
    #expect(store.version == 0)
    store.send(.increment)
    #expect(store.version == 1)
    store.send(.set(value: 1))  // same count: the view is unchanged
    #expect(store.version == 1)
    store.send(.increment)
    #expect(store.version == 2)
    store.send(.set(value: 9))
    store.send(.increment)  // 10: a milestone event with a change
    #expect(store.version == 4)
    #expect(publications.map(\.to) == [1, 2, 3, 4])
    #expect(publications.map(\.from) == [0, 1, 2, 3])
  }

  @Test(arguments: [
    Counter.allActions.map(WireCase.init), Search.allActions.map(WireCase.init),
    Loader.allActions.map(WireCase.init), Editor.allActions.map(WireCase.init),
    Board.allActions.map(WireCase.init),
  ])
  func wireTransformRoundTripsEveryAction(_ cases: [WireCase]) throws {
    for wireCase in cases { try wireCase.check() }
  }
}

/// One action of a test feature, round-tripped through the wire format.
struct WireCase: Sendable {
  let check: @Sendable () throws -> Void

  init<A: Codable & Equatable & Sendable>(_ action: A) {
    check = {
      let wire = try WireFormat.encode(action)
      #expect(wire["type"]?.stringValue != nil, "no type in \(wire)")
      let back = try WireFormat.decode(A.self, from: wire)
      #expect(back == action, "\(action) came back as \(back) from \(wire)")
    }
  }
}

/// Yields until `condition` holds (bounded), for effects ending on other threads.
@StateActor
func waitUntil(_ condition: () -> Bool) async {
  for _ in 0..<10_000 where !condition() { await Task.yield() }
}

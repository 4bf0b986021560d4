// Swift Testing is found only where tests are built (debug, `swift build --build-tests`); a
// release build of every target (`swift build -c release`) compiles this library without it,
// as an empty module, instead of failing.
#if canImport(Testing)

  import JSON
  @_spi(Testing) import StateKit
  import Testing

  /// A store for tests that asserts every change: `send` an action and describe how the state
  /// must change; `receive` each action the effects feed back, in order. By default the test
  /// fails when the state changed in any other way, when an action fed back or an event was
  /// left unasserted, or when effects still run at `finish()` (or when the store is dropped).
  ///
  /// ```swift
  /// @Test @StateActor func increments() async {
  ///   let store = TestStore(feature: Counter())
  ///   await store.send(.increment) { $0.count = 1 }
  ///   await store.finish()
  /// }
  /// ```
  ///
  /// Requires `Action: Equatable`. Failures are recorded with Swift Testing's `Issue.record`
  /// at the caller's line, listing the fields that differ.
  @StateActor
  public final class TestStore<F: Feature> where F.Action: Equatable {
    /// The store under test: its effects and bookkeeping are the real ones.
    public let store: Store<F>
    /// `.on` checks the whole state after each step and fails on anything left unasserted;
    /// `.off` checks only what each assertion closure sets, and skips actions it is not asked
    /// to receive.
    public var exhaustivity: Exhaustivity
    /// How long `receive` and `finish` wait, in real time, for effects running on other
    /// threads. With a `TestClock` nothing sleeps, so this only bounds a failing test: it is
    /// generous because on a loaded machine other tests can hold the cooperative pool for
    /// seconds while an effect waits to run.
    public var timeout: Duration

    var asserted: F.State
    var received: [(action: F.Action, state: F.State)] = []
    var sentState: F.State?
    var events: [JSON] = []
    /// Every progress update the effects reported so far (`begin`, `report`s, `end`), in order,
    /// whichever action started them: assert it with `#expect(store.progress == [...])`.
    public private(set) var progress: [ProgressUpdate] = []
    private var isFinished = false
    private let location: SourceLocation
    /// The test's line being run (a send, a receive, finish): where a programming error with no
    /// site of its own (a view that does not encode) is recorded.
    var currentLocation: SourceLocation?

    /// Where failures go; nil records them as Swift Testing issues. TestStore's own tests catch
    /// them here to check the messages, so deliberate failures do not show as known issues.
    @_spi(Testing) public var failureHandler: (@StateActor (String, SourceLocation) -> Void)?

    /// Whether a `TestStore` checks everything (`.on`) or only what the test asserts (`.off`).
    public enum Exhaustivity: Sendable {
      case on
      case off
    }

    /// A test store over a new `Store` of `feature`, starting from `initialState` (the
    /// feature's own by default).
    public init(
      feature: F, initialState: F.State? = nil, exhaustivity: Exhaustivity = .on,
      timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation
    ) {
      let store = Store(feature: feature, state: initialState)
      self.store = store
      self.exhaustivity = exhaustivity
      self.timeout = timeout
      self.asserted = store.state
      self.location = sourceLocation
      store.didReduce = { [weak self] action, fromEffect in
        guard let self else { return }
        if fromEffect {
          self.received.append((action, self.store.state))
        } else {
          self.sentState = self.store.state
        }
      }
      store.observer = { [weak self] publication in self?.events += publication.events }
      store.didReportProgress = { [weak self] _, update in self?.progress.append(update) }
      // Programming errors fail the test at their source: the `.run` that threw with no
      // catch, the `.emit` whose event does not encode, the send to a closed store.
      store.diagnosticHandler = { [weak self] message, site in
        guard let self else { return }
        self.fail(
          message,
          sourceLocation: site.map {
            SourceLocation(
              fileID: $0.fileID, filePath: $0.filePath, line: $0.line, column: $0.column)
          } ?? self.currentLocation ?? self.location)
      }
      // A name list that drifted from its enum fails every test of the feature.
      for problem in F.caseNameProblems {
        fail("\(F.self).\(problem)", sourceLocation: sourceLocation)
      }
      do {
        _ = try JSONValueEncoder().encode(feature.view(of: store.state))
      } catch {
        fail("the view of \(F.name) does not encode: \(error)", sourceLocation: sourceLocation)
      }
    }

    isolated deinit {
      if !isFinished && exhaustivity == .on {
        if !received.isEmpty {
          fail(
            "The test ended with \(received.count) unreceived action(s): \(describe(received)). "
              + "Receive them, or skipReceivedActions() and finish().",
            sourceLocation: location)
        }
        if store.inFlightEffectCount > 0 {
          fail(
            "The test ended with \(store.inFlightEffectCount) effect(s) still running. Advance "
              + "the test clock and await finish(), or cancel them.",
            sourceLocation: location)
        }
      }
      store.close()
    }

    /// The store's current state.
    public var state: F.State { store.state }

    /// Sends `action` (in process: no public check, no validation) and checks the state it
    /// produced: `update` turns the state before into the expected state after. Returns a
    /// handle on the effects it started, to await or cancel them.
    @discardableResult
    public func send(
      _ action: F.Action, assert update: ((inout F.State) throws -> Void)? = nil,
      sourceLocation: SourceLocation = #_sourceLocation
    ) async -> TestStoreTask<F> {
      if !received.isEmpty {
        if exhaustivity == .on {
          fail(
            "Must receive \(received.count) action(s) before sending \(action): "
              + describe(received),
            sourceLocation: sourceLocation)
        }
        skipReceivedActions()
      }
      sentState = nil
      currentLocation = sourceLocation
      // A closed store reports the send at the test's line (through `diagnosticHandler`).
      let transaction = store.send(
        action, fileID: sourceLocation.fileID, filePath: sourceLocation.filePath,
        line: sourceLocation.line, column: sourceLocation.column)
      let task = TestStoreTask(testStore: self, transaction: transaction)
      // Let the effects it started run to their first sleep, so the test's next
      // `clock.advance` finds them waiting.
      await store.settleEffects()
      guard let after = sentState else { return task }
      check("send(\(action))", after: after, update, sourceLocation)
      return task
    }

    /// Waits for the next action an effect fed back (or a reducer sent with `.send`), checks
    /// that it is `expected`, and checks the state it produced like `send` does.
    public func receive(
      _ expected: F.Action, assert update: ((inout F.State) throws -> Void)? = nil,
      sourceLocation: SourceLocation = #_sourceLocation
    ) async {
      await receive(
        { $0 == expected }, description: "\(expected)", assert: update,
        sourceLocation: sourceLocation)
    }

    /// Waits for the next action fed back and checks it with `matches` (for actions carrying
    /// values a test cannot spell in full).
    public func receive(
      _ matches: (F.Action) -> Bool, description: String = "a matching action",
      assert update: ((inout F.State) throws -> Void)? = nil,
      sourceLocation: SourceLocation = #_sourceLocation
    ) async {
      currentLocation = sourceLocation
      while true {
        guard await waitForReceived() else {
          let running = store.inFlightEffectCount
          fail(
            "Expected to receive \(description), but no action arrived"
              + (running > 0
                ? " (\(running) effect(s) still running: does the test clock need advancing?)"
                : " and no effect is running"),
            sourceLocation: sourceLocation)
          return
        }
        let next = received.removeFirst()
        await store.settleEffects()
        if matches(next.action) {
          check("receive(\(next.action))", after: next.state, update, sourceLocation)
          return
        }
        asserted = next.state
        if exhaustivity == .on {
          fail(
            "Received \(next.action), expected \(description)", sourceLocation: sourceLocation)
          return
        }
      }
    }

    /// Checks that the next events emitted, as wire objects in order, are `expected`.
    public func receiveEvents(_ expected: [JSON], sourceLocation: SourceLocation = #_sourceLocation)
    {
      let got = Array(events.prefix(expected.count))
      events.removeFirst(got.count)
      if got != expected {
        fail(
          "Expected events \(expected.map(render)), got \(got.map(render))",
          sourceLocation: sourceLocation)
      }
    }

    /// Drops the actions received so far without checking them; their state changes are taken
    /// as asserted.
    public func skipReceivedActions() {
      asserted = received.last?.state ?? asserted
      received.removeAll()
    }

    /// Waits for every effect to end, then fails for any effect still running and, in
    /// exhaustive mode, for actions or events left unasserted. Fails as soon as nothing can
    /// progress (every effect left sleeps on a test clock), and at the latest after `timeout`.
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) async {
      isFinished = true
      currentLocation = sourceLocation
      await settle()
      if store.inFlightEffectCount > 0 {
        fail(
          "\(store.inFlightEffectCount) effect(s) still running at the end of the test"
            + (store.effectsAreBlocked ? ", asleep on a test clock" : "")
            + ": advance the test clock, or cancel them.",
          sourceLocation: sourceLocation)
      }
      guard exhaustivity == .on else { return }
      if !received.isEmpty {
        fail(
          "\(received.count) action(s) received but not asserted: \(describe(received))",
          sourceLocation: sourceLocation)
      }
      if !events.isEmpty {
        fail(
          "\(events.count) event(s) emitted but not asserted: \(events.map(render))",
          sourceLocation: sourceLocation)
      }
    }

    func fail(_ message: String, sourceLocation: SourceLocation) {
      if let failureHandler {
        failureHandler(message, sourceLocation)
      } else {
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
      }
    }

    /// Waits until the effects ended or none can progress without the test (each asleep on a
    /// test clock); `timeout` of real time bounds effects blocked on the outside world.
    func settle() async {
      let deadline = ContinuousClock.now.advanced(by: timeout)
      while store.inFlightEffectCount > 0 && ContinuousClock.now < deadline {
        await store.settleEffects()
        if store.effectsAreBlocked { return }
      }
    }

    /// Whether an action fed back is waiting; returns false as soon as none can come.
    private func waitForReceived() async -> Bool {
      let deadline = ContinuousClock.now.advanced(by: timeout)
      while received.isEmpty {
        if ContinuousClock.now >= deadline { return false }
        await store.settleEffects()
        if received.isEmpty && store.effectsAreBlocked { return false }
      }
      return true
    }

    private func describe(_ actions: [(action: F.Action, state: F.State)]) -> String {
      actions.map { "\($0.action)" }.joined(separator: ", ")
    }

    /// Exhaustive: the asserted state, updated by the test, must equal the actual one.
    /// Non-exhaustive: the test's updates applied to the actual state must change nothing.
    func check(
      _ step: String, after actual: F.State, _ update: ((inout F.State) throws -> Void)?,
      _ sourceLocation: SourceLocation
    ) {
      var expected = exhaustivity == .on ? asserted : actual
      do {
        try update?(&expected)
      } catch {
        fail("The assertion of \(step) threw \(error)", sourceLocation: sourceLocation)
      }
      asserted = actual
      guard expected != actual else { return }
      fail(
        "The state after \(step) is not the expected one:\n"
          + StateDifference(expected: expected, actual: actual).description,
        sourceLocation: sourceLocation)
    }
  }

#endif

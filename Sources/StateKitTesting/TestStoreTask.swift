#if canImport(Testing)

  @_spi(Testing) import StateKit
  import Testing

  /// The effects one `TestStore.send` started, and those started by the actions they fed
  /// back: await them with ``finish(sourceLocation:)`` or stop them with ``cancel()``.
  ///
  /// ```swift
  /// let countdown = await store.send(.start(seconds: 60)) { ... }
  /// await countdown.cancel()
  /// await store.finish()
  /// ```
  @StateActor
  public struct TestStoreTask<F: Feature> where F.Action: Equatable {
    let testStore: TestStore<F>
    /// The send's transaction in the store.
    public let transaction: Transaction

    /// Whether any of its effects still runs.
    public var isRunning: Bool { testStore.store.isRunning(transaction) }

    /// Waits until its effects ended; fails as soon as none can progress without the test
    /// (each asleep on a test clock), and at the latest after the store's `timeout`.
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) async {
      await wait()
      if isRunning {
        testStore.fail(
          "The effects of this send still run"
            + (testStore.store.effectsAreBlocked ? ", asleep on a test clock" : "")
            + ": advance the test clock, or cancel them.",
          sourceLocation: sourceLocation)
      }
    }

    /// Cancels its effects and waits until their tasks ended.
    public func cancel() async {
      testStore.store.cancel(transaction)
      await wait()
    }

    private func wait() async {
      let store = testStore.store
      let deadline = ContinuousClock.now.advanced(by: testStore.timeout)
      while isRunning && ContinuousClock.now < deadline {
        await store.settleEffects()
        if isRunning && store.effectsAreBlocked { return }
      }
    }
  }

#endif

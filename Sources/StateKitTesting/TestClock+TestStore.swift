#if canImport(Testing)

  import StateKit

  extension TestClock {
    /// Runs the clock until `store`'s effects have all finished: a retry loop or a timer to its
    /// end. One `run()` can return while an effect, slowed by a busy machine, has yet to start
    /// its next sleep; this runs again until nothing is in flight (for at most `limit` of real
    /// time: only a failure bound).
    @StateActor
    public func run<F: Feature>(until store: TestStore<F>, limit: Duration = .seconds(60)) async {
      let deadline = ContinuousClock.now.advanced(by: limit)
      await run()
      while store.store.inFlightEffectCount > 0 && ContinuousClock.now < deadline {
        await Task.yield()
        await run()
      }
    }
  }

#endif

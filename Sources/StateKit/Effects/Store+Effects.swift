import JSON

/// Where an effect runs: the client transaction it belongs to (for `settled`), the request
/// that caused it (carried by its publications) and the cancellation ids around it.
struct EffectContext {
  var transaction: Transaction
  var cause: JSON?
  var ids: [EffectID] = []
  /// The store's generation when the client's action arrived (see `Store.generation`).
  var generation: UInt64 = 0
  /// The history entry of the action whose reduce started the effect (nil without history).
  var origin: UInt64?
}

struct RunningEffect {
  var task: Task<Void, Never>
  var ids: [EffectID]
  var transaction: Transaction
  /// Its life so far, when the store keeps history.
  var life: EffectLife?
  var started: ContinuousClock.Instant?
}

/// The effect interpreter. Everything here runs on the state actor, so the bookkeeping needs
/// no locks; only the bodies of `.run` operations (and clock sleeps) leave it.
extension Store {
  /// Starts `effect`; returns the tasks it created so that a concatenation can wait for them.
  @discardableResult
  func start(_ effect: Effect<F.Action, F.Event>, in context: EffectContext) -> [Task<Void, Never>]
  {
    // An effect of a generation a rewind cancelled starts nothing more.
    guard context.generation == generation else { return [] }
    switch effect.node {
    case .none:
      return []
    case .send(let action):
      enqueue(action, context, fromEffect: true)
      return []
    case .emit(let event, let site):
      do {
        pendingEvents.append(try WireFormat.encode(event))
      } catch {
        diagnose("an event of \(F.name) does not encode: \(error)", at: site)
      }
      return []
    case .run(let priority, let operation, let handler, let site):
      return [
        spawn(priority: priority, in: context, kind: "run") { [weak self] in
          let send = Send<F.Action>(
            { action in self?.enqueue(action, context, fromEffect: true) },
            progress: { progress in self?.reportProgress(progress, of: context) })
          // A task cancelled before it first ran never starts its work.
          guard !Task.isCancelled else { return false }
          do {
            try await operation(send)
          } catch {
            // Cancellation is how the newest request wins, never a failure to report.
            if error is CancellationError || Task.isCancelled { return false }
            if let handler {
              await handler(error, send)
            } else {
              self?.diagnose(
                "an effect of \(F.name) threw \(error) and has no catch handler", at: site)
            }
            return true
          }
          return false
        }
      ]
    case .cancel(let id):
      cancel(id)
      return []
    case .cancelMatching(let matches):
      for id in effectsByID.keys where matches(id) { cancel(id) }
      return []
    case .cancellable(let id, let cancelInFlight, let inner):
      if cancelInFlight { cancel(id) }
      var innerContext = context
      innerContext.ids.append(id)
      return start(inner, in: innerContext)
    case .debounce(let id, let duration, let clock, let inner):
      cancel(id)
      var innerContext = context
      innerContext.ids.append(id)
      return [
        spawn(priority: nil, in: innerContext, kind: "debounce") { [weak self] in
          do {
            try await sleep(on: clock, for: duration)
          } catch {
            return false
          }
          guard let self, !Task.isCancelled else { return false }
          await self.run(inner, in: innerContext)
          return false
        }
      ]
    case .onCancel(let action, let inner):
      let tasks = start(inner, in: context)
      guard !tasks.isEmpty else { return [] }
      return [
        spawn(priority: nil, in: context, kind: "onCancel") { [weak self] in
          guard let self else { return false }
          await self.waitFor(tasks)
          // Enqueued directly, not through a `Send`: this watcher is cancelled with the work
          // it watches, and its one job is to speak after that. `enqueue` still drops it after
          // a rewind (another generation) or once the store is closed.
          if tasks.contains(where: \.isCancelled) {
            self.enqueue(action, context, fromEffect: true)
          }
          return false
        }
      ]
    case .background(let inner):
      var innerContext = context
      innerContext.transaction = .background
      innerContext.cause = nil
      return start(inner, in: innerContext)
    case .merge(let effects):
      return effects.flatMap { start($0, in: context) }
    case .concatenate(let effects):
      // The synchronous head runs now (a `.send` first is reduced right after this action,
      // as it would be alone); from the first effect that starts a task on, a driver task
      // waits for each step before starting the next.
      for (index, effect) in effects.enumerated() {
        let tasks = start(effect, in: context)
        guard tasks.isEmpty else {
          let rest = effects[(index + 1)...]
          return [
            spawn(priority: nil, in: context, kind: "concatenate") { [weak self] in
              guard let self else { return false }
              await self.waitFor(tasks)
              for effect in rest {
                guard !Task.isCancelled else { return false }
                await self.run(effect, in: context)
              }
              return false
            }
          ]
        }
      }
      return []
    }
  }

  /// Starts `effect` from inside a task, publishes what it emitted, and waits for it.
  private func run(_ effect: Effect<F.Action, F.Event>, in context: EffectContext) async {
    let tasks = start(effect, in: context)
    if !pendingEvents.isEmpty {
      let publication = publish(cause: context.cause)
      if history != nil, let publication { recordEvents(publication, context) }
    }
    await waitFor(tasks)
  }

  /// Waits for effect tasks from inside another one, which meanwhile is not active.
  private func waitFor(_ tasks: [Task<Void, Never>]) async {
    guard !tasks.isEmpty else { return }
    activity.ended()
    for task in tasks { await task.value }
    activity.began()
  }

  /// Starts an effect task; `body` returns whether the effect failed (threw an error other
  /// than cancellation).
  private func spawn(
    priority: TaskPriority?, in context: EffectContext, kind: String,
    _ body: @escaping @StateActor () async -> Bool
  ) -> Task<Void, Never> {
    nextEffectKey += 1
    let key = nextEffectKey
    // The task cannot run before this method returns (we hold the state actor), so it is
    // registered before it can finish.
    let activity = self.activity
    activity.began()
    let task = Task(priority: priority) { [weak self] in
      let failed = await EffectActivity.$current.withValue(activity) { await body() }
      activity.ended()
      self?.finished(key, failed: failed, cancelled: Task.isCancelled)
    }
    running[key] = RunningEffect(task: task, ids: context.ids, transaction: context.transaction)
    if history != nil { effectStarted(key, kind: kind, context) }
    for id in context.ids { effectsByID[id, default: []].insert(key) }
    liveEffects[context.transaction, default: 0] += 1
    return task
  }

  private func finished(_ key: UInt64, failed: Bool, cancelled: Bool) {
    guard let effect = running.removeValue(forKey: key) else { return }
    if let life = effect.life {
      effectEnded(life, started: effect.started, failed: failed, cancelled: cancelled)
    }
    if cancelled, !progressWatches.isEmpty { progressCancelled(effect.transaction) }
    for id in effect.ids {
      effectsByID[id]?.remove(key)
      if effectsByID[id]?.isEmpty == true { effectsByID[id] = nil }
    }
    let left = (liveEffects[effect.transaction] ?? 1) - 1
    if left > 0 {
      liveEffects[effect.transaction] = left
    } else {
      liveEffects[effect.transaction] = nil
      // Before the waiters: a `settled` answer comes after the progress it ends.
      endProgress(of: effect.transaction)
      for waiter in settledWaiters.removeValue(forKey: effect.transaction) ?? [] {
        waiter.resume()
      }
    }
    if isIdle {
      let waiters = idleWaiters
      idleWaiters.removeAll()
      for waiter in waiters { waiter.resume() }
    }
  }

  /// Cancels every running effect marked with `id`. They stay counted until their tasks
  /// actually end, so `settled` still means "nothing of it is running".
  func cancel(_ id: EffectID) {
    for key in effectsByID[id] ?? [] { running[key]?.task.cancel() }
  }

  /// For tests: waits (within a few seconds of real time) until every effect of this store
  /// is finished or asleep on a `TestClock`. `TestStore` does it after each step; a test
  /// driving a plain `Store` calls it after `send` and before `clock.advance`, so that the
  /// effects just started are already waiting on the clock when time moves.
  public func settleEffects() async {
    await EffectActivity.settle([activity])
  }

  /// The number of effects running now (`TestStore` fails a test that ends with some).
  public var inFlightEffectCount: Int { running.count }

  /// Whether none of the store's effects can progress by itself: each one still running sleeps
  /// on a `TestClock` (or waits for one that does). `TestStore` fails at once then, instead of
  /// waiting out its timeout for time that only the test can move.
  @_spi(Testing) public var effectsAreBlocked: Bool { activity.isQuiescent }

  /// Returns once every effect started by `transaction` (and by what it fed back) ended.
  public func settled(_ transaction: Transaction) async {
    guard !isClosed, liveEffects[transaction] != nil else { return }
    await withCheckedContinuation { settledWaiters[transaction, default: []].append($0) }
  }

  /// Whether an effect started by `transaction` (or by an action it fed back) still runs.
  public func isRunning(_ transaction: Transaction) -> Bool { liveEffects[transaction] != nil }

  /// Cancels every effect started by `transaction` and by the actions it fed back. They stay
  /// counted until their tasks actually end, like ``cancel(_:)`` by id.
  public func cancel(_ transaction: Transaction) {
    for effect in running.values where effect.transaction == transaction { effect.task.cancel() }
  }

  /// Returns once no effect of this store runs but background ones (`Effect.background()`),
  /// which nothing waits for.
  public func idle() async {
    guard !isClosed, !isIdle else { return }
    await withCheckedContinuation { idleWaiters.append($0) }
  }

  /// Whether every effect still running is a background one (counted under
  /// `Transaction.background`).
  private var isIdle: Bool { running.count == liveEffects[.background] ?? 0 }

  /// Cancels every effect and resolves every waiter; later sends are ignored. Idempotent.
  public func close() {
    guard !isClosed else { return }
    isClosed = true
    for effect in running.values { effect.task.cancel() }
    endAllProgress()
    for waiters in settledWaiters.values { for waiter in waiters { waiter.resume() } }
    settledWaiters.removeAll()
    for waiter in idleWaiters { waiter.resume() }
    idleWaiters.removeAll()
  }
}

/// Opens the existential so that `any Clock<Duration>` can sleep.
private func sleep<C: Clock>(on clock: C, for duration: C.Duration) async throws {
  try await clock.sleep(until: clock.now.advanced(by: duration), tolerance: nil)
}

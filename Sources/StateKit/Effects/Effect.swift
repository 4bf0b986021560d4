/// What a reducer asks the store to do after it changed the state: nothing, send another
/// action, emit an event, or run async work whose results come back as actions.
///
/// An effect is a value (a small tree of operations); the store interprets it, so tests can
/// run the same effects under a `TestClock`. Cancellation is by id: an effect marked
/// `.cancellable(id:)` (and everything it starts later, including the actions it sends back
/// and their own effects started in the same group) can be stopped with `.cancel(id:)`.
///
/// ```swift
/// case .queryChanged(let query):
///   state.query = query
///   return .run { send in
///     await send(.results(try await api.search(query)))
///   } catch: { error, send in
///     await send(.failed(error.localizedDescription))
///   }
///   .debounce(id: CancelID.search, for: .milliseconds(300), clock: clock)
/// ```
public struct Effect<Action: Sendable, Event: Sendable>: Sendable {
  /// An async operation that reports through `Send`.
  public typealias Operation = @Sendable (Send<Action>) async throws -> Void
  /// Turns an error thrown by an operation (never a `CancellationError`) into actions.
  public typealias Catch = @Sendable (any Error, Send<Action>) async -> Void

  indirect enum Node: Sendable {
    case none
    case send(Action)
    case emit(Event, CallSite)
    case run(priority: TaskPriority?, operation: Operation, catch: Catch?, site: CallSite)
    case cancel(EffectID)
    /// Cancels the effects marked with any id that matches (a keyed collection's children).
    case cancelMatching(@Sendable (EffectID) -> Bool)
    case cancellable(EffectID, cancelInFlight: Bool, Effect)
    case debounce(EffectID, Duration, any Clock<Duration>, Effect)
    case background(Effect)
    case merge([Effect])
    case concatenate([Effect])
    /// Runs the effect; sends the action once it ended, when any of its tasks was cancelled.
    case onCancel(Action, Effect)
  }

  let node: Node

  /// Whether the effect does nothing (`.none`), asked without copying the node.
  var isNone: Bool {
    if case .none = node { return true }
    return false
  }

  init(_ node: Node) { self.node = node }

  /// Does nothing.
  public static var none: Self { Self(.none) }

  /// Sends `action` to the store right after the current action, before `send` returns.
  public static func send(_ action: Action) -> Self { Self(.send(action)) }

  /// Emits `event` to subscribers with the publication of the current action. An event that
  /// does not encode is reported at this call's file and line.
  public static func emit(
    _ event: Event, fileID: String = #fileID, filePath: String = #filePath, line: Int = #line,
    column: Int = #column
  ) -> Self {
    Self(.emit(event, CallSite(fileID: fileID, filePath: filePath, line: line, column: column)))
  }

  /// Runs `operation` as a task; it reports results with `await send(...)`. An error it
  /// throws is handed to `handler` (a `CancellationError`, or any error thrown after the
  /// effect was cancelled, is never reported). Without a handler the error is a programming
  /// error reported at this call's file and line (features should turn failures into state):
  /// a test failure in `TestStore`, a log line in the server.
  public static func run(
    priority: TaskPriority? = nil,
    operation: @escaping Operation,
    catch handler: Catch? = nil,
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line,
    column: Int = #column
  ) -> Self {
    Self(
      .run(
        priority: priority, operation: operation, catch: handler,
        site: CallSite(fileID: fileID, filePath: filePath, line: line, column: column)))
  }

  /// Cancels every running effect marked with `id`.
  public static func cancel(id: some Hashable & Sendable) -> Self {
    Self(.cancel(EffectID(id)))
  }

  /// Marks this effect (and all it starts) with `id`, so `.cancel(id:)` can stop it. With
  /// `cancelInFlight`, effects already running under `id` are cancelled first: the newest
  /// request wins.
  public func cancellable(id: some Hashable & Sendable, cancelInFlight: Bool = false) -> Self {
    Self(.cancellable(EffectID(id), cancelInFlight: cancelInFlight, self))
  }

  /// Runs this effect (and all it starts) in the background: like any other effect, but no
  /// client waits for it. `dispatch` with `wait: "settled"` answers without it, the shutdown's
  /// drain cancels it instead of waiting, and what it changes is published with no `cause`.
  /// For a timer set far ahead (a list's expiry) or a subscription; a test still ends it
  /// (advance the test clock past it, or cancel it) before `finish()`.
  ///
  /// ```swift
  /// return .run { send in
  ///   try await clock.sleep(for: .seconds(300))
  ///   await send(.internal(.expired))
  /// }
  /// .cancellable(id: CancelID.expiry, cancelInFlight: true)
  /// .background()
  /// ```
  public func background() -> Self { Self(.background(self)) }

  /// Starts this effect after `duration` of quiet on `clock`: each new debounced effect with
  /// the same `id` cancels the previous one, whether it is still waiting or already running.
  public func debounce(
    id: some Hashable & Sendable, for duration: Duration, clock: any Clock<Duration>
  ) -> Self {
    Self(.debounce(EffectID(id), duration, clock, self))
  }

  /// Runs `effects` at the same time.
  public static func merge(_ effects: Self...) -> Self { merge(effects) }

  /// Runs `effects` at the same time.
  public static func merge(_ effects: [Self]) -> Self {
    let effects = effects.filter { if case .none = $0.node { false } else { true } }
    if effects.isEmpty { return .none }
    if effects.count == 1 { return effects[0] }
    return Self(.merge(effects))
  }

  /// Runs `effects` one after the other: each starts when everything the previous one
  /// started has finished.
  public static func concatenate(_ effects: Self...) -> Self { concatenate(effects) }

  /// Runs `effects` one after the other.
  public static func concatenate(_ effects: [Self]) -> Self {
    let effects = effects.filter { if case .none = $0.node { false } else { true } }
    if effects.isEmpty { return .none }
    if effects.count == 1 { return effects[0] }
    return Self(.concatenate(effects))
  }

  /// Sends `action` once this effect has ended, when it was cancelled before it finished (a
  /// client's `$/cancelRequest` of the request that started it, `.cancel(id:)`, a newer
  /// `cancelInFlight`): how a feature puts its state right after work it did not finish, since
  /// a cancelled effect's own sends are dropped. Not after a rewind or a closed store, which
  /// drop every late action.
  ///
  /// ```swift
  /// return syncEffect(notes).onCancel(.syncCancelled).cancellable(id: CancelID.sync)
  /// ```
  public func onCancel(_ action: Action) -> Self { Self(.onCancel(action, self)) }

  /// This effect and `other` at the same time.
  public func merge(with other: Self) -> Self { .merge(self, other) }

  /// This effect, then `other`.
  public func concatenate(with other: Self) -> Self { .concatenate(self, other) }
}

extension Effect {
  /// The same effect with its actions turned into another feature's actions (and its events
  /// into that feature's events): how a parent embeds a child's effects.
  public func map<A: Sendable, E: Sendable>(
    action transformAction: @escaping @Sendable (Action) -> A,
    event transformEvent: @escaping @Sendable (Event) -> E
  ) -> Effect<A, E> {
    func map(_ effect: Self) -> Effect<A, E> {
      effect.map(action: transformAction, event: transformEvent)
    }
    switch node {
    case .none: return .none
    case .send(let action): return .send(transformAction(action))
    case .emit(let event, let site): return Effect<A, E>(.emit(transformEvent(event), site))
    case .run(let priority, let operation, let handler, let site):
      let mappedOperation: Effect<A, E>.Operation = { send in
        try await operation(
          Send<Action>({ action in send(transformAction(action)) }, progress: send.report))
      }
      var mappedHandler: Effect<A, E>.Catch?
      if let handler {
        mappedHandler = { error, send in
          await handler(
            error, Send<Action>({ action in send(transformAction(action)) }, progress: send.report))
        }
      }
      return Effect<A, E>(
        .run(priority: priority, operation: mappedOperation, catch: mappedHandler, site: site))
    case .cancel(let id): return Effect<A, E>(.cancel(id))
    case .cancelMatching(let matches): return Effect<A, E>(.cancelMatching(matches))
    case .cancellable(let id, let cancelInFlight, let inner):
      return Effect<A, E>(.cancellable(id, cancelInFlight: cancelInFlight, map(inner)))
    case .debounce(let id, let duration, let clock, let inner):
      return Effect<A, E>(.debounce(id, duration, clock, map(inner)))
    case .background(let inner): return Effect<A, E>(.background(map(inner)))
    case .merge(let effects): return Effect<A, E>(.merge(effects.map(map)))
    case .concatenate(let effects): return Effect<A, E>(.concatenate(effects.map(map)))
    case .onCancel(let action, let inner):
      return Effect<A, E>(.onCancel(transformAction(action), map(inner)))
    }
  }

  /// The same effect with its actions turned into another action type.
  public func map<A: Sendable>(_ transform: @escaping @Sendable (Action) -> A) -> Effect<A, Event> {
    map(action: transform, event: { $0 })
  }

  /// The same effect with every cancellation id made private to `scope`, so two children of
  /// a keyed collection using the same ids do not cancel each other.
  func scoped(by scope: EffectID) -> Self {
    switch node {
    case .none, .send, .emit, .run: return self
    case .cancel(let id): return Self(.cancel(id.scoped(by: scope)))
    case .cancelMatching(let matches):
      return Self(.cancelMatching { id in id.isScoped(by: scope, matching: matches) })
    case .cancellable(let id, let cancelInFlight, let inner):
      return Self(
        .cancellable(id.scoped(by: scope), cancelInFlight: cancelInFlight, inner.scoped(by: scope))
      )
    case .debounce(let id, let duration, let clock, let inner):
      return Self(.debounce(id.scoped(by: scope), duration, clock, inner.scoped(by: scope)))
    case .background(let inner): return Self(.background(inner.scoped(by: scope)))
    case .merge(let effects): return Self(.merge(effects.map { $0.scoped(by: scope) }))
    case .concatenate(let effects):
      return Self(.concatenate(effects.map { $0.scoped(by: scope) }))
    case .onCancel(let action, let inner): return Self(.onCancel(action, inner.scoped(by: scope)))
    }
  }
}

extension Effect where Event == Never {
  /// The same effect in a feature that emits events (a child without events, embedded).
  public func map<A: Sendable, E: Sendable>(
    action transform: @escaping @Sendable (Action) -> A, eventType: E.Type = E.self
  ) -> Effect<A, E> {
    map(action: transform, event: absurd)
  }
}

/// The function from an impossible value: maps a child's `Never` events into any event type.
@Sendable func absurd<T>(_ never: Never) -> T {}

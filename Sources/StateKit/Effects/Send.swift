/// How a running effect feeds actions back to its store, and reports its progress.
///
/// Calling it after the effect was cancelled does nothing: a slow reply that arrives after
/// the user moved on (a search for "ca" finishing after the one for "calendar" started) can
/// never overwrite newer state.
///
/// ```swift
/// return .run { send in
///   let users = try await api.search(query)
///   await send(.searchResponse(users))
/// }
/// ```
@StateActor
public struct Send<Action: Sendable>: Sendable {
  let deliver: @StateActor @Sendable (Action) -> Void
  /// Where ``progress(done:total:message:)`` goes: the store, which tells whoever watches the
  /// action that started the effect. Nil in a `Send` made by hand.
  let report: (@StateActor @Sendable (EffectProgress) -> Void)?

  /// Makes a `Send` that hands every action to `deliver` (for custom runtimes and tests).
  public init(_ deliver: @escaping @StateActor @Sendable (Action) -> Void) {
    self.deliver = deliver
    self.report = nil
  }

  /// Makes a `Send` whose progress reports go to `report`.
  public init(
    _ deliver: @escaping @StateActor @Sendable (Action) -> Void,
    progress report: (@StateActor @Sendable (EffectProgress) -> Void)?
  ) {
    self.deliver = deliver
    self.report = report
  }

  /// Sends `action` to the store, unless the calling effect was cancelled.
  public func callAsFunction(_ action: Action) {
    // `Task.isCancelled` is the effect's own task: `await send(x)` hops to the state actor
    // but stays in the same task.
    guard !Task.isCancelled else { return }
    deliver(action)
  }

  /// Reports how far the effect has come: `done` of `total` units (nil: unknown), with a
  /// message for a person. The first report of an action's effects begins its progress, the
  /// end of its last effect ends it; a client that asked for progress hears each one
  /// (`$/progress`). Nothing happens after the effect was cancelled.
  ///
  /// ```swift
  /// await send.progress(done: 3, total: 10, message: "Uploading note-4")
  /// ```
  public func progress(done: Int, total: Int? = nil, message: String? = nil) {
    guard !Task.isCancelled, let report else { return }
    report(EffectProgress(done: done, total: total, message: message))
  }
}

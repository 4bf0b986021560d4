/// How a running effect feeds actions back to its store.
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

  /// Makes a `Send` that hands every action to `deliver` (for custom runtimes and tests).
  public init(_ deliver: @escaping @StateActor @Sendable (Action) -> Void) {
    self.deliver = deliver
  }

  /// Sends `action` to the store, unless the calling effect was cancelled.
  public func callAsFunction(_ action: Action) {
    // `Task.isCancelled` is the effect's own task: `await send(x)` hops to the state actor
    // but stays in the same task.
    guard !Task.isCancelled else { return }
    deliver(action)
  }
}

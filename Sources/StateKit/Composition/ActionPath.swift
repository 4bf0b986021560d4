/// Where a child's actions live inside a parent's action enum: how to wrap one (`embed`)
/// and how to find one (`extract`).
///
/// ```swift
/// enum Action { case counter(Counter.Action), reset }
/// let path = ActionPath<Action, Counter.Action>(
///   embed: Action.counter,
///   extract: { if case .counter(let action) = $0 { action } else { nil } })
/// ```
public struct ActionPath<Root, Value>: Sendable {
  /// Wraps a child action in the parent's action.
  public let embed: @Sendable (Value) -> Root
  /// The child action inside a parent action, or `nil` when it is the parent's own.
  public let extract: @Sendable (Root) -> Value?

  /// A path from `embed` and `extract`.
  public init(
    embed: @escaping @Sendable (Value) -> Root, extract: @escaping @Sendable (Root) -> Value?
  ) {
    self.embed = embed
    self.extract = extract
  }
}

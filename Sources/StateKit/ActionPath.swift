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
  public let embed: @Sendable (Value) -> Root
  public let extract: @Sendable (Root) -> Value?

  public init(
    embed: @escaping @Sendable (Value) -> Root, extract: @escaping @Sendable (Root) -> Value?
  ) {
    self.embed = embed
    self.extract = extract
  }
}

/// Embeds a child feature in a parent: the child's state at a key path of the parent's, its
/// actions inside one case of the parent's actions, its effects and events lifted into the
/// parent's.
///
/// ```swift
/// struct App: Feature {
///   let counter = Scope<App, Counter>(
///     state: \.counter, action: .init(embed: Action.counter, extract: \.counter),
///     child: Counter())
///   func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
///     if let effect = counter.reduce(into: &state, action: action) { return effect }
///     switch action { ... }
///   }
/// }
/// ```
public struct Scope<Parent: Feature, Child: Feature>: Sendable {
  /// Where the child's state lives in the parent's state.
  public let state: WritableKeyPath<Parent.State, Child.State> & Sendable
  /// Where the child's actions live in the parent's actions.
  public let action: ActionPath<Parent.Action, Child.Action>
  /// How a child's event becomes the parent's.
  public let event: @Sendable (Child.Event) -> Parent.Event
  /// The child feature, with its dependencies.
  public let child: Child

  /// Embeds `child` at `state`, addressed through `action`, with events lifted by `event`.
  public init(
    state: WritableKeyPath<Parent.State, Child.State> & Sendable,
    action: ActionPath<Parent.Action, Child.Action>,
    event: @escaping @Sendable (Child.Event) -> Parent.Event,
    child: Child
  ) {
    self.state = state
    self.action = action
    self.event = event
    self.child = child
  }

  /// Reduces `action` with the child when it is one of the child's, and returns the child's
  /// effect lifted into the parent; `nil` when the action is the parent's own.
  public func reduce(into parentState: inout Parent.State, action parentAction: Parent.Action)
    -> Effect<Parent.Action, Parent.Event>?
  {
    guard let childAction = action.extract(parentAction) else { return nil }
    let effect = child.reduce(into: &parentState[keyPath: state], action: childAction)
    return effect.map(action: action.embed, event: event)
  }
}

extension Scope where Child.Event == Never {
  /// A child without events.
  public init(
    state: WritableKeyPath<Parent.State, Child.State> & Sendable,
    action: ActionPath<Parent.Action, Child.Action>,
    child: Child
  ) {
    self.init(state: state, action: action, event: absurd, child: child)
  }
}

/// A keyed collection of child features inside a parent: each element of an
/// `IdentifiedArray` of child states runs the child's reducer, its effects are private to it
/// (the same cancellation id in two children names two groups), and they are cancelled when
/// the element is removed.
///
/// ```swift
/// struct Board: Feature {
///   let timers = ForEachChild<Board, Timer>(
///     state: \.timers,
///     action: .init(embed: Action.timer, extract: { if case .timer(let id, let a) = $0 { (id, a) } else { nil } }),
///     child: Timer(clock: clock))
///   func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
///     timers.reduce(into: &state, action: action) { state, action in
///       switch action {
///       case .add(let id): state.timers.append(Timer.State(id: id)); return .none
///       case .remove(let id): state.timers.remove(id: id); return .none  // its effects stop
///       case .timer: return .none
///       }
///     }
///   }
/// }
/// ```
public struct ForEachChild<Parent: Feature, Child: Feature>: Sendable
where Child.State: Identifiable, Child.State.ID: Sendable {
  /// The id of one child.
  public typealias ID = Child.State.ID

  /// Where the children's states live in the parent's state.
  public let state: WritableKeyPath<Parent.State, IdentifiedArray<Child.State>> & Sendable
  /// Where a child's actions (with its id) live in the parent's actions.
  public let action: ActionPath<Parent.Action, (id: ID, action: Child.Action)>
  /// How a child's event becomes the parent's.
  public let event: @Sendable (Child.Event) -> Parent.Event
  /// The child feature (its dependencies included), shared by every child.
  public let child: Child

  /// Children of `child` at `state`, addressed through `action`, with events lifted by `event`.
  public init(
    state: WritableKeyPath<Parent.State, IdentifiedArray<Child.State>> & Sendable,
    action: ActionPath<Parent.Action, (id: ID, action: Child.Action)>,
    event: @escaping @Sendable (Child.Event) -> Parent.Event,
    child: Child
  ) {
    self.state = state
    self.action = action
    self.event = event
    self.child = child
  }

  /// Runs the child's reducer for a child action (an action for an id that is not in the
  /// collection is dropped), then `parent` for every action, then cancels the effects of
  /// the children that `parent` (or the child) removed.
  public func reduce(
    into parentState: inout Parent.State, action parentAction: Parent.Action,
    parent: (inout Parent.State, Parent.Action) -> Effect<Parent.Action, Parent.Event>
  ) -> Effect<Parent.Action, Parent.Event> {
    let before = parentState[keyPath: state].revision
    var effects: [Effect<Parent.Action, Parent.Event>] = []
    if let (id, childAction) = action.extract(parentAction) {
      var childEffect: Effect<Child.Action, Child.Event> = .none
      parentState[keyPath: state].modify(id: id) { childState in
        childEffect = child.reduce(into: &childState, action: childAction)
      }
      let embed = action.embed
      let scope = scopeID(id)
      effects.append(
        childEffect.scoped(by: scope).cancellable(id: scope)
          .map(action: { embed((id, $0)) }, event: event))
    }
    effects.append(parent(&parentState, parentAction))
    effects.append(cancelRemoved(since: before, in: parentState[keyPath: state]))
    return .merge(effects)
  }

  private func scopeID(_ id: ID) -> EffectID {
    EffectID(ChildScope(collection: state as AnyKeyPath & Sendable, id: id))
  }

  private func cancelRemoved(since before: ArrayRevision, in children: IdentifiedArray<Child.State>)
    -> Effect<Parent.Action, Parent.Event>
  {
    guard let changes = children.changes(since: before) else {
      // The log no longer reaches back (hundreds of changes in one action): cancel every
      // child scope of this collection whose id is gone.
      let collection = state as AnyKeyPath & Sendable
      let alive = Set(children.ids.map { EffectID(ChildScope(collection: collection, id: $0)) })
      return Effect(
        .cancelMatching { id in
          guard let scope = id.base as? ChildScope<ID> else { return false }
          return scope.collection == collection && !alive.contains(id)
        })
    }
    var removed: [ID] = []
    for change in changes {
      switch change {
      case .remove(_, let id, _): removed.append(id)
      case .reset(let ids): removed += ids
      case .update, .insert: break
      }
    }
    let gone = removed.filter { children[id: $0] == nil }
    return .merge(gone.map { .cancel(id: scopeID($0)) })
  }
}

extension ForEachChild where Child.Event == Never {
  /// Children without events.
  public init(
    state: WritableKeyPath<Parent.State, IdentifiedArray<Child.State>> & Sendable,
    action: ActionPath<Parent.Action, (id: ID, action: Child.Action)>,
    child: Child
  ) {
    self.init(state: state, action: action, event: absurd, child: child)
  }
}

/// The cancellation id around all effects of one child of a keyed collection.
struct ChildScope<ID: Hashable & Sendable>: Hashable, Sendable {
  var collection: AnyKeyPath & Sendable
  var id: ID

  static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.collection == rhs.collection && lhs.id == rhs.id
  }

  func hash(into hasher: inout Hasher) {
    hasher.combine(collection)
    hasher.combine(id)
  }
}

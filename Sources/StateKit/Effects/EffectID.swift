/// The identity of a group of effects, for `Effect.cancellable(id:)`, `.cancel(id:)` and
/// `.debounce(id:...)`: any `Hashable & Sendable` value, compared by type and value.
///
/// ```swift
/// enum CancelID { case search }
/// return .run { send in ... }.cancellable(id: CancelID.search, cancelInFlight: true)
/// ```
public struct EffectID: Hashable, Sendable {
  // Safe: every initializer takes a `Sendable` value, so the boxed value is `Sendable` too;
  // `AnyHashable` itself is not declared `Sendable` only because it can box anything.
  private struct Box: Hashable, @unchecked Sendable {
    let base: AnyHashable
  }
  private let box: Box

  /// Wraps `id`; an `EffectID` passed in is used as it is rather than wrapped again.
  public init(_ id: some Hashable & Sendable) {
    if let id = id as? EffectID {
      self = id
    } else {
      box = Box(base: AnyHashable(id))
    }
  }

  /// The wrapped value.
  var base: AnyHashable { box.base }

  /// `id` as seen inside the child effects of `scope` (one element of a keyed collection):
  /// the same id in two children names two different groups.
  func scoped(by scope: EffectID) -> EffectID {
    EffectID(Scoped(scope: scope, id: self))
  }

  /// Whether this is an id made by `scoped(by: scope)` from an id that `matches`.
  func isScoped(by scope: EffectID, matching matches: (EffectID) -> Bool) -> Bool {
    guard let scoped = box.base as? Scoped, scoped.scope == scope else { return false }
    return matches(scoped.id)
  }

  private struct Scoped: Hashable, Sendable {
    let scope: EffectID
    let id: EffectID
  }
}

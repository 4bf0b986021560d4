/// An action enum that keeps the actions only its feature sends (results of effects, pushes
/// from a service) in a type of their own, embedded as one case, `case internal(Internal)`.
/// Every other case is public: a client may send it, and `features/list` advertises it. An
/// internal action sent by a client is refused with -32003. The names come from the types, so
/// there is no list to keep in step with the enum.
///
/// ```swift
/// enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
///   case add(title: String)
///   case toggle(id: Int)
///   case `internal`(Internal)
///
///   enum Internal: Codable, Equatable, Sendable { case saved(id: Int) }
/// }
///
/// await send(.internal(.saved(id: 1)))
/// ```
///
/// On the wire an internal action is as flat as a public one (`{"type": "saved", "id": 1}`),
/// so recordings, history and the journal read the same; a name of `Internal` that is also a
/// public case of the enum is refused at registration (``Feature/caseNameProblems``).
public protocol EmbedsInternalActions {
  /// The internal actions: an enum with synthesized `Codable`, like the action enum.
  associatedtype Internal: Codable & Sendable
  /// The one case that carries an internal action; an enum case `internal(Internal)`
  /// satisfies it.
  static func `internal`(_ action: Internal) -> Self
}

/// The wire name of the case ``EmbedsInternalActions`` requires, in Swift's synthesized
/// `Codable` shape: `{"internal": {"_0": {"saved": {...}}}}`.
let internalCaseName = "internal"

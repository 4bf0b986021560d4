import JSON

/// A unit of application logic: a state, the actions that change it, a pure reducer, and the
/// view it publishes.
///
/// A feature is a struct whose stored properties are its dependencies (actor services, a
/// clock), injected where it is registered; the reducer touches the outside world only by
/// returning effects.
///
/// ```swift
/// struct Counter: Feature {
///   struct State: Codable, Equatable, Sendable { var count = 0 }
///   enum Action: Codable, Equatable, Sendable { case increment, set(value: Int) }
///   static let name = "counter"
///   var initialState: State { State() }
///   func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
///     switch action {
///     case .increment: state.count += 1
///     case .set(let value): state.count = value
///     }
///     return .none
///   }
/// }
/// ```
///
/// Every case of `Action` is an action a client may send, unless the enum keeps some apart as
/// internal (``EmbedsInternalActions``); every case of `Event` is an event. Their wire names
/// are read from the types (``caseNames``).
public protocol Feature: Sendable {
  associatedtype State: Codable & Equatable & Sendable
  /// An enum with synthesized `Codable`; its cases are the actions clients may send, but for
  /// those kept apart as internal (``EmbedsInternalActions``).
  associatedtype Action: Codable & Sendable
  /// An enum with synthesized `Codable`; its cases are the events the feature emits.
  associatedtype Event: Codable & Sendable = Never
  /// The published state: derived values in, private values out.
  associatedtype View: Codable & Equatable & Sendable = State

  /// The feature's wire name, also the id of its default store.
  static var name: String { get }
  /// Whether the feature's default store is persisted across restarts.
  static var isPersistent: Bool { get }
  /// Raised when `State`'s encoding changes incompatibly; a snapshot of another version is
  /// set aside instead of decoded.
  static var schemaVersion: Int { get }

  var initialState: State { get }

  /// Whether decoding `saved`, a private state this feature encoded (a persisted snapshot, a
  /// fork's state, a recording's), gave another state than the one saved: `true` when the
  /// decoding settled something (a sync saved mid-flight comes back idle), `false` when the
  /// state is the one saved, `nil` when the feature does not say. A restored store resumes at
  /// the saved version only when the state is the same, so that a version never names two
  /// states; otherwise at the next one.
  ///
  /// The default says nothing, and the store then encodes the whole decoded state again and
  /// compares it with `saved`: exact for any decoding, but a second encoding of the state, as
  /// large as the state. A feature with a large state whose `init(from:)` changes only a few
  /// known parts answers by comparing those parts alone (``decoded(_:isSaved:)``), in time that
  /// does not grow with the rest; it promises that every other part decodes to exactly what was
  /// saved, and answers `nil` for a saved state it did not write (members it never writes).
  ///
  /// A saved state holding an array of 1,000 elements or more (`JSON.holdsElidedArray`) is
  /// decoded consuming, each element's JSON let go as it is decoded: `saved` then has every
  /// such array emptied, and `nil` counts as changed (there is nothing left to compare with).
  ///
  /// ```swift
  /// static func decodingChanged(_ state: State, from saved: JSON) -> Bool? {
  ///   !decoded(state.sync, isSaved: saved["sync"])  // `init(from:)` settles only the sync
  /// }
  /// ```
  static func decodingChanged(_ state: State, from saved: JSON) -> Bool?

  /// The other stores this feature reads (``Shared`` handles among its dependencies): the
  /// server binds each to its open stores at start-up and refuses to start when one is missing.
  /// The default reads none.
  var dependencies: [SharedDependency] { get }

  /// Refuses a public action before it is reduced; the state is left untouched and the
  /// client gets the error's pointer and reason. The reducer itself never fails.
  func validate(_ action: Action) throws(ActionValidationError)

  /// Checks a state a client supplies (`store/open`'s `state`, merged over ``initialState``)
  /// with the rules ``validate(_:)`` applies to actions, so no value an action would be refused
  /// for enters through the initial state. Throw for the first bad field, its pointer from the
  /// state's root (`/items/0/price`); ``ActionValidationError/within(_:)`` moves an action
  /// rule's error there. The default accepts every state that decodes.
  ///
  /// ```swift
  /// func validate(state: State) throws(ActionValidationError) {
  ///   do { try validate(.set(value: state.count)) } catch { throw error.within("/count") }
  /// }
  /// ```
  func validate(state: State) throws(ActionValidationError)

  /// Changes the state for one action and returns the effects to run. Must be deterministic
  /// given the state, the action and the reduce's time (`ReduceTime.current`): time travel and
  /// replay reduce recorded actions again. Read the time of day only through an injected clock
  /// that follows `ReduceTime` (the reference app's `WallClock`), never `Date()`; get random
  /// values in an effect and send them back in an action.
  func reduce(into state: inout State, action: Action) -> Effect<Action, Event>

  func view(of state: State) -> View

  /// Reduces a client's wire action in `store`: what `Store.send(wire:cause:)` does. Do not
  /// implement it; the default is the implementation. It is a requirement so that its witness
  /// is compiled in the feature's own module, where the feature's type is known and the
  /// optimizer can specialize the store's whole send path for it (with cross-module
  /// optimization, `-cross-module-optimization`); otherwise that path runs generic code that
  /// looks up the metadata of every generic type it touches.
  @StateActor
  static func _send(wire action: JSON, cause: JSON?, to store: Store<Self>) throws(ActionError)
    -> Transaction

  /// `Action` when it conforms to ``EmbedsInternalActions``, else nil. Do not implement it:
  /// the defaults answer, chosen where the feature conforms. A requirement so that no run-time
  /// cast asks it: a cast that fails scans every protocol conformance in the binary, once per
  /// feature at start-up.
  static var _internalActionsEmbedding: (any EmbedsInternalActions.Type)? { get }
}

extension Feature {
  public static var isPersistent: Bool { false }
  public static var schemaVersion: Int { 1 }
  public var dependencies: [SharedDependency] { [] }
  /// Says nothing: the store compares the whole re-encoded state (see the requirement).
  public static func decodingChanged(_ state: State, from saved: JSON) -> Bool? { nil }
  /// Whether `part` of a decoded state encodes to `saved`, the member of the saved state it was
  /// decoded from (`nil` when the saved state has no such member, as for an optional left out):
  /// what ``decodingChanged(_:from:)`` compares a part it may change with.
  public static func decoded(_ part: some Encodable, isSaved saved: JSON?) -> Bool {
    guard let encoded = try? JSONValueEncoder().encode(part) else { return false }
    guard let saved else { return encoded == .null }
    return encoded.equalsByValue(saved)
  }
  public func validate(_ action: Action) throws(ActionValidationError) {}
  /// Accepts every state that decodes.
  public func validate(state: State) throws(ActionValidationError) {}
  /// The store's own send path; see the requirement.
  @inlinable @StateActor
  public static func _send(wire action: JSON, cause: JSON?, to store: Store<Self>)
    throws(ActionError) -> Transaction
  {
    try store.receive(wire: action, cause: cause)
  }
  /// No internal actions; see the requirement.
  public static var _internalActionsEmbedding: (any EmbedsInternalActions.Type)? { nil }
}

extension Feature where Action: EmbedsInternalActions {
  /// The action enum embeds internal actions; see the requirement.
  public static var _internalActionsEmbedding: (any EmbedsInternalActions.Type)? { Action.self }
}

extension Feature where View == State {
  public func view(of state: State) -> State { state }
}

/// Why a feature refused a public action: the JSON Pointer of the offending field, relative to
/// the action object (`/quantity`), and what would have been right.
public struct ActionValidationError: Error, Equatable, Sendable {
  public var pointer: String
  public var reason: String

  public init(pointer: String, reason: String) {
    self.pointer = pointer
    self.reason = reason
  }

  /// The same error for the same fields found under `prefix`: an action rule applied to a
  /// part of the state (`/price` of `add` becomes `/items/0/price`). Fields named differently
  /// in the state are renamed: `within("/latencyMs", for: "/ms")`.
  public func within(_ prefix: String, for field: String? = nil) -> ActionValidationError {
    guard let field else { return ActionValidationError(pointer: prefix + pointer, reason: reason) }
    let rest = pointer.hasPrefix(field) ? String(pointer.dropFirst(field.count)) : pointer
    return ActionValidationError(pointer: prefix + rest, reason: reason)
  }
}

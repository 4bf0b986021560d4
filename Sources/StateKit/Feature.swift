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
///   static let publicActions = ["increment", "set"]
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
public protocol Feature: Sendable {
  associatedtype State: Codable & Equatable & Sendable
  associatedtype Action: Codable & Sendable
  associatedtype Event: Codable & Sendable = Never
  /// The published state: derived values in, private values out.
  associatedtype View: Codable & Equatable & Sendable = State

  /// The feature's wire name, also the id of its default store.
  static var name: String { get }
  /// Wire names (`"type"`) of the actions a client may send; every other action is internal,
  /// produced only by the feature's own effects, and refused when a client sends it.
  static var publicActions: [String] { get }
  /// Wire names of the events the feature emits, for `features/list` and the schemas.
  static var eventNames: [String] { get }
  /// Whether the feature's default store is persisted across restarts.
  static var isPersistent: Bool { get }
  /// Raised when `State`'s encoding changes incompatibly; a snapshot of another version is
  /// set aside instead of decoded.
  static var schemaVersion: Int { get }

  var initialState: State { get }

  /// Refuses a public action before it is reduced; the state is left untouched and the
  /// client gets the error's pointer and reason. The reducer itself never fails.
  func validate(_ action: Action) throws(ActionValidationError)

  /// Changes the state for one action and returns the effects to run. Must be deterministic
  /// given the state, the action and the reduce's time (`ReduceTime.current`): time travel and
  /// replay reduce recorded actions again. Read the time of day only through an injected clock
  /// that follows `ReduceTime` (the reference app's `WallClock`), never `Date()`; get random
  /// values in an effect and send them back in an action.
  func reduce(into state: inout State, action: Action) -> Effect<Action, Event>

  func view(of state: State) -> View
}

extension Feature {
  public static var eventNames: [String] { [] }
  public static var isPersistent: Bool { false }
  public static var schemaVersion: Int { 1 }
  public func validate(_ action: Action) throws(ActionValidationError) {}
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
}

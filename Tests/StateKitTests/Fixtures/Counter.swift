import StateKit

/// The smallest feature: a count, a validated `set`, an internal action, a milestone event.
struct Counter: Feature {
  struct State: Codable, Equatable, Sendable {
    var count = 0
    var secret = "not published"
  }
  struct View: Codable, Equatable, Sendable {
    var count: Int
    var isEven: Bool
  }
  enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    case increment
    case decrement
    case set(value: Int)
    case noop
    case `internal`(Internal)

    /// Never accepted from a client.
    enum Internal: Codable, Equatable, Sendable {
      case reset
    }
  }
  enum Event: Codable, Equatable, Sendable {
    case milestone(count: Int)
  }

  static let name = "counter"

  var initialState: State { State() }

  func validate(_ action: Action) throws(ActionValidationError) {
    if case .set(let value) = action, value < 0 {
      throw ActionValidationError(pointer: "/value", reason: "expected a count of 0 or more")
    }
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
    switch action {
    case .increment:
      state.count += 1
      return state.count % 10 == 0 ? .emit(.milestone(count: state.count)) : .none
    case .decrement:
      state.count -= 1
    case .set(let value):
      state.count = value
    case .noop:
      break
    case .internal(.reset):
      state.count = 0
    }
    return .none
  }

  func view(of state: State) -> View {
    View(count: state.count, isEven: state.count % 2 == 0)
  }

  static let allActions: [Action] = [
    .increment, .decrement, .set(value: 3), .noop, .internal(.reset),
  ]
}

import StateKit

/// The smallest feature: a number you can change, now or after a delay. The README and the
/// benchmarks use it.
///
/// ```sh
/// echo '{"jsonrpc":"2.0","id":1,"method":"dispatch","params":{"store":"counter","action":{"type":"increment"}}}' | stateserver
/// ```
public struct CounterFeature: Feature {
  /// The count; also the view.
  public struct State: Codable, Equatable, Sendable {
    public var count: Int

    public init(count: Int = 0) {
      self.count = count
    }
  }

  /// What a client may do with the count.
  public enum Action: Codable, Equatable, Sendable {
    case increment
    case decrement
    case set(value: Int)
    case reset
    /// Increments once `afterMs` milliseconds have passed on the feature's clock.
    case incrementLater(afterMs: Int)
  }

  public static let name = "counter"

  /// The longest delay `incrementLater` accepts: a day, so a typo cannot keep a store busy
  /// for years.
  public static let maximumDelayMs = 86_400_000

  let clock: any Clock<Duration>

  /// A counter whose delayed increments wait on `clock`.
  public init(clock: any Clock<Duration>) {
    self.clock = clock
  }

  public var initialState: State { State() }

  public func validate(_ action: Action) throws(ActionValidationError) {
    if case .incrementLater(let afterMs) = action, !(0...Self.maximumDelayMs).contains(afterMs) {
      throw ActionValidationError(
        pointer: "/afterMs",
        reason: "expected a delay in milliseconds from 0 to \(Self.maximumDelayMs), got \(afterMs)")
    }
  }

  public func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .increment:
      // Saturating: `set` accepts any Int, and a trap would end the whole server.
      state.count = state.count.saturatingAdding(1)
      return .none
    case .decrement:
      state.count = state.count.saturatingAdding(-1)
      return .none
    case .set(let value):
      state.count = value
      return .none
    case .reset:
      state.count = 0
      return .none
    case .incrementLater(let afterMs):
      return .run { [clock] send in
        try await clock.sleep(for: .milliseconds(afterMs))
        await send(.increment)
      }
    }
  }
}

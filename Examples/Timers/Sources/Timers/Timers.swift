import StateKit

/// A countdown: `start` ticks once a second on the injected clock until it reaches zero, then
/// emits `finished`; `stop` cancels it.
public struct Timers: Feature {
  public struct State: Codable, Equatable, Sendable {
    public var length = 0
    public var remaining = 0
    public var running = false
    public init(length: Int = 0, remaining: Int = 0, running: Bool = false) {
      self.length = length
      self.remaining = remaining
      self.running = running
    }
  }

  public enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    case start(seconds: Int)
    case stop
    case `internal`(Internal)
    /// Only the countdown effect sends it.
    public enum Internal: Codable, Equatable, Sendable { case tick }
  }

  public enum Event: Codable, Equatable, Sendable {
    case finished(seconds: Int)
  }

  public static let name = "timers"

  let clock: any Clock<Duration>
  public init(clock: any Clock<Duration> = ContinuousClock()) { self.clock = clock }

  public var initialState: State { State() }

  public func validate(_ action: Action) throws(ActionValidationError) {
    if case .start(let seconds) = action, !(1...3600).contains(seconds) {
      throw ActionValidationError(pointer: "/seconds", reason: "expected 1 to 3600 seconds")
    }
  }

  public func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
    switch action {
    case .start(let seconds):
      state.length = seconds
      state.remaining = seconds
      state.running = true
      return .run { [clock] send in
        for _ in 0..<seconds {
          try await clock.sleep(for: .seconds(1))
          await send(.internal(.tick))
        }
      }
      .cancellable(id: "countdown", cancelInFlight: true)
    case .stop:
      state.running = false
      return .cancel(id: "countdown")
    case .internal(.tick):
      state.remaining -= 1
      guard state.remaining == 0 else { return .none }
      state.running = false
      return .emit(.finished(seconds: state.length))
    }
  }
}

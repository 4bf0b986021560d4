import StateKit

/// A child feature: a timer that ticks every second once started.
struct Ticker: Feature {
  struct State: Codable, Equatable, Sendable, Identifiable {
    var id: Int
    var ticks = 0
  }
  enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    case start
    case `internal`(Internal)

    /// Only the timer effect sends it.
    enum Internal: Codable, Equatable, Sendable {
      case tick
    }
  }
  enum CancelID { case timer }

  static let name = "ticker"

  let clock: any Clock<Duration>

  var initialState: State { State(id: 0) }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .start:
      // The same id in every ticker: scoping keeps one child from cancelling another.
      return .run { [clock] send in
        while true {
          try await clock.sleep(for: .seconds(1))
          await send(.internal(.tick))
        }
      }
      .cancellable(id: CancelID.timer, cancelInFlight: true)
    case .internal(.tick):
      state.ticks += 1
      return .none
    }
  }
}

/// A parent with a keyed collection of tickers and one embedded counter.
struct Board: Feature {
  struct State: Codable, Equatable, Sendable {
    var tickers: IdentifiedArray<Ticker.State> = []
    var counter = Counter.State()
  }
  enum Action: Codable, Equatable, Sendable {
    case add(id: Int)
    case remove(id: Int)
    case ticker(id: Int, action: Ticker.Action)
    case counter(action: Counter.Action)
    /// Removes every ticker one by one and adds `count` new ones: more changes in one action
    /// than the change log keeps.
    case rebuild(count: Int)
  }
  enum Event: Codable, Equatable, Sendable {
    case counter(event: Counter.Event)
  }

  static let name = "board"

  let tickers: ForEachChild<Board, Ticker>
  let counter = Scope<Board, Counter>(
    state: \.counter,
    action: ActionPath(
      embed: { Action.counter(action: $0) },
      extract: { if case .counter(let action) = $0 { action } else { nil } }),
    event: { Event.counter(event: $0) },
    child: Counter())

  init(clock: any Clock<Duration>) {
    tickers = ForEachChild(
      state: \.tickers,
      action: ActionPath(
        embed: { Action.ticker(id: $0.id, action: $0.action) },
        extract: { if case .ticker(let id, let action) = $0 { (id, action) } else { nil } }),
      child: Ticker(clock: clock))
  }

  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
    if let effect = counter.reduce(into: &state, action: action) { return effect }
    return tickers.reduce(into: &state, action: action) { state, action in
      switch action {
      case .add(let id):
        state.tickers.append(Ticker.State(id: id))
      case .remove(let id):
        state.tickers.remove(id: id)
      case .rebuild(let count):
        while let first = state.tickers.first { state.tickers.remove(id: first.id) }
        for id in 100..<(100 + count) { state.tickers.append(Ticker.State(id: id)) }
      case .ticker, .counter:
        break
      }
      return .none
    }
  }

  static let allActions: [Action] = [
    .add(id: 1), .remove(id: 1), .ticker(id: 1, action: .start),
    .ticker(id: 2, action: .internal(.tick)),
    .counter(action: .set(value: 2)), .rebuild(count: 3),
  ]
}

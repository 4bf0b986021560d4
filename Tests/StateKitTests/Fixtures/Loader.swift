import StateKit
import StateKitTesting

struct BackendError: Error, Equatable {}

/// A list backend: each call takes one second on the test clock, then returns or throws
/// what the script says (call n answers `script[n - 1]`, the last entry repeats).
actor ListBackend {
  private(set) var calls = 0
  let clock: TestClock
  var script: [Result<[String], BackendError>]

  init(clock: TestClock, script: [Result<[String], BackendError>]) {
    self.clock = clock
    self.script = script
  }

  func setScript(_ script: [Result<[String], BackendError>]) { self.script = script }

  func fetch() async throws -> [String] {
    calls += 1
    let answer = script[min(calls, script.count) - 1]
    try await clock.sleep(for: .seconds(1))
    return try answer.get()
  }
}

/// Loading a list: load and refresh (which cancels the load in flight), bounded retries
/// with exponential backoff, errors as state, the last good data kept and marked stale.
struct Loader: Feature {
  enum LoadState: Codable, Equatable, Sendable {
    case idle
    case loading
    case loaded
    case failed(message: String, recoverable: Bool)
  }
  struct State: Codable, Equatable, Sendable {
    var load = LoadState.idle
    var items: [String] = []
    var isStale = false
  }
  enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    case load
    case refresh
    case `internal`(Internal)

    /// The results of the load effect.
    enum Internal: Codable, Equatable, Sendable {
      case loaded(items: [String])
      case retrying(attempt: Int)
      case failed
    }
  }
  enum CancelID { case load }

  static let name = "loader"
  static let maximumAttempts = 3
  static let failureMessage = "We couldn't load the list. Check your connection and try again."

  let backend: ListBackend
  let clock: any Clock<Duration>

  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .load, .refresh:
      state.load = .loading
      return fetch().cancellable(id: CancelID.load, cancelInFlight: true)
    case .internal(.loaded(let items)):
      state.load = .loaded
      state.items = items
      state.isStale = false
      return .none
    case .internal(.retrying):
      return .none
    case .internal(.failed):
      state.load = .failed(message: Self.failureMessage, recoverable: true)
      state.isStale = !state.items.isEmpty
      return .none
    }
  }

  private func fetch() -> Effect<Action, Never> {
    .run { [backend, clock] send in
      var attempt = 1
      while true {
        do {
          let items = try await backend.fetch()
          await send(.internal(.loaded(items: items)))
          return
        } catch is BackendError where attempt < Self.maximumAttempts {
          await send(.internal(.retrying(attempt: attempt)))
          // Backoff: 1 s, then 2 s, then 4 s...
          try await clock.sleep(for: .seconds(1 << (attempt - 1)))
          attempt += 1
        }
      }
    } catch: { _, send in
      await send(.internal(.failed))
    }
  }

  static let allActions: [Action] = [
    .load, .refresh, .internal(.loaded(items: ["a"])), .internal(.retrying(attempt: 1)),
    .internal(.failed),
  ]
}

import StateKit
import StateKitTesting

/// A profile service whose save takes one second on the test clock.
actor ProfileService {
  private(set) var saves: [String] = []
  let clock: TestClock

  init(clock: TestClock) { self.clock = clock }

  func save(_ name: String) async throws {
    saves.append(name)
    try await clock.sleep(for: .seconds(1))
  }
}

/// An editor with a save that can be cancelled (back to idle, never failed) and is never
/// started twice at once.
struct Editor: Feature {
  enum SaveState: Codable, Equatable, Sendable {
    case idle
    case saving
    case saved
    case failed(message: String)
  }
  struct State: Codable, Equatable, Sendable {
    var name = "Ada"
    var save = SaveState.idle
  }
  enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    case save
    case cancelSave
    case `internal`(Internal)

    /// The results of the save effect.
    enum Internal: Codable, Equatable, Sendable {
      case saved
      case saveFailed(message: String)
    }
  }
  enum CancelID { case save }

  static let name = "editor"

  let service: ProfileService

  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .save:
      guard state.save != .saving else { return .none }
      state.save = .saving
      return .run { [service, name = state.name] send in
        try await service.save(name)
        await send(.internal(.saved))
      } catch: { _, send in
        await send(.internal(.saveFailed(message: "Saving failed. Try again.")))
      }
      .cancellable(id: CancelID.save)
    case .cancelSave:
      guard state.save == .saving else { return .none }
      state.save = .idle
      return .cancel(id: CancelID.save)
    case .internal(.saved):
      state.save = .saved
      return .none
    case .internal(.saveFailed(let message)):
      state.save = .failed(message: message)
      return .none
    }
  }

  static let allActions: [Action] = [
    .save, .cancelSave, .internal(.saved), .internal(.saveFailed(message: "x")),
  ]
}

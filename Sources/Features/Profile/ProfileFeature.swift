import FoundationEssentials
import StateKit

/// An editor for the user's display name: a draft, a save through the server that can be
/// cancelled, no double save, and failures shown as safe messages with the draft kept.
/// Persistent: the name and the draft survive a restart.
public struct ProfileFeature: Feature {
  /// The saved name, the draft being edited, and the save's progress.
  public struct State: Codable, Equatable, Sendable {
    /// The name the server has.
    public var displayName: String
    public var draft: String
    public var saveState: SaveState

    public init(displayName: String = "", draft: String = "", saveState: SaveState = SaveState()) {
      self.displayName = displayName
      self.draft = draft
      self.saveState = saveState
    }

    private enum CodingKeys: String, CodingKey {
      case displayName, draft, saveState
    }

    /// Decodes a saved or client-given state. A save cannot survive the process that ran it,
    /// so a state restored while `saving` comes back `idle`, draft kept.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      displayName = try container.decode(String.self, forKey: .displayName)
      draft = try container.decode(String.self, forKey: .draft)
      saveState = try container.decode(SaveState.self, forKey: .saveState)
      if saveState.status == .saving { saveState = SaveState() }
    }
  }

  /// The published profile: the state plus `canSave`.
  public struct View: Codable, Equatable, Sendable {
    public var displayName: String
    public var draft: String
    public var saveState: SaveState
    /// False for a blank draft or while saving.
    public var canSave: Bool
  }

  /// What a client may do in the editor, and the save results the effect sends back.
  public enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    case edit(name: String)
    /// Saves the draft; does nothing while a save is running or when the draft is blank.
    case save
    /// Stops a running save: back to idle, draft kept.
    case cancelSave
    case dismissError
    /// Sent by the feature itself; a client's is refused (-32003).
    case `internal`(Internal)

    /// The results of the save effect.
    public enum Internal: Codable, Equatable, Sendable {
      case saved(name: String)
      case saveFailed(message: String)
    }
  }

  /// `dismiss` once a save succeeded.
  public enum Event: Codable, Equatable, Sendable {
    /// The save succeeded: a frontend closes the editor.
    case dismiss
  }

  public static let name = "profile"
  public static let isPersistent = true

  let backend: Backend

  /// A profile saved through `backend`.
  public init(backend: Backend) {
    self.backend = backend
  }

  enum CancelID { case save }

  public var initialState: State { State() }

  public func view(of state: State) -> View {
    View(
      displayName: state.displayName, draft: state.draft, saveState: state.saveState,
      canSave: Self.canSave(state))
  }

  static func canSave(_ state: State) -> Bool {
    state.saveState.status != .saving
      && !state.draft.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
  }

  public func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
    switch action {
    case .edit(let name):
      state.draft = name
      // "Saved" described the old draft; a failure stays until dismissed or saved again.
      if state.saveState.status == .saved { state.saveState = SaveState() }
      return .none

    case .save:
      guard Self.canSave(state) else { return .none }
      let name = state.draft.trimmingCharacters(in: .whitespacesAndNewlines)
      state.saveState = SaveState(status: .saving)
      return .run { [backend] send in
        await send(.internal(.saved(name: try await backend.saveProfile(name: name))))
      } catch: { error, send in
        await send(
          .internal(.saveFailed(message: SafeMessage.describing(error, doing: "save your profile")))
        )
      }
      .cancellable(id: CancelID.save, cancelInFlight: true)

    case .cancelSave:
      guard state.saveState.status == .saving else { return .none }
      state.saveState = SaveState()
      return .cancel(id: CancelID.save)

    case .dismissError:
      guard state.saveState.status == .failed else { return .none }
      state.saveState = SaveState()
      return .none

    case .internal(.saved(let name)):
      state.displayName = name
      // A draft edited while the save ran is the user's newer work: keep it.
      if state.draft.trimmingCharacters(in: .whitespacesAndNewlines) == name { state.draft = name }
      state.saveState = SaveState(status: .saved)
      return .emit(.dismiss)

    case .internal(.saveFailed(let message)):
      state.saveState = SaveState(status: .failed, message: message)
      return .none
    }
  }
}

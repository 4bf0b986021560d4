import FoundationEssentials
import StateKit

/// The simulated backend, steerable through the protocol: go offline, slow down, fail at a
/// rate (the fallback endpoint has its own switches), or change a note or a user on the server
/// to provoke a conflict. Its view also counts the calls
/// each endpoint received, so a test can check that a debounced search sent one request.
///
/// The published status follows the `Backend` actor: `Features.all` subscribes the store to
/// the actor's changes, which arrive as the internal action `statusChanged`.
public struct BackendFeature: Feature {
  /// The backend's status is the whole state, and the view.
  public typealias State = BackendStatus

  /// Steering actions, and the internal status updates from the actor.
  public enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    case setOnline(online: Bool)
    case setLatency(ms: Int)
    case setFailRate(rate: Double)
    /// Takes the fallback endpoint (the users list's second source) offline or back online.
    case setFallbackOnline(online: Bool)
    case setFallbackFailRate(rate: Double)
    /// Changes the server's copy of note `noteId` (its id or its `serverId`) to `text`.
    case remoteEdit(noteId: String, text: String)
    /// Renames user `id` on the server (another device's edit): its version goes up and the
    /// new copy is pushed to the users stores.
    case remoteUserEdit(id: Int, name: String)
    /// Sent by the feature itself; a client's is refused (-32003).
    case `internal`(Internal)

    /// The status updates from the actor, and what the remote edits found.
    public enum Internal: Codable, Equatable, Sendable {
      /// The backend's status changed (a request arrived, a setting changed).
      case statusChanged(status: BackendStatus)
      /// `remoteEdit` found no such note on the server.
      case remoteEditMissed(noteId: String)
      /// `remoteUserEdit` found no such user on the server.
      case remoteUserEditMissed(id: Int)
    }
  }

  /// `toast` when a `remoteEdit` found no note or a `remoteUserEdit` no user.
  public enum Event: Codable, Equatable, Sendable {
    case toast(message: String)
  }

  public static let name = "backend"

  let backend: Backend
  let initial: BackendStatus

  /// `initial` is the backend's status when the store is made (its flags from the command
  /// line); the store keeps following the actor afterwards.
  public init(backend: Backend, initial: BackendStatus) {
    self.backend = backend
    self.initial = initial
  }

  public var initialState: State { initial }

  public func validate(_ action: Action) throws(ActionValidationError) {
    switch action {
    case .setLatency(let ms) where ms < 0 || ms > 60_000:
      throw ActionValidationError(
        pointer: "/ms", reason: "expected a latency in milliseconds from 0 to 60000, got \(ms)")
    case .setFailRate(let rate) where !(0...1).contains(rate),
      .setFallbackFailRate(let rate) where !(0...1).contains(rate):
      throw ActionValidationError(
        pointer: "/rate", reason: "expected a failure rate from 0 to 1, got \(rate)")
    case .remoteUserEdit(_, let name) where name.trimmingCharacters(in: .whitespaces).isEmpty:
      throw ActionValidationError(pointer: "/name", reason: "expected a non-blank name")
    default:
      return
    }
  }

  /// A supplied status obeys the rules of `setLatency` and `setFailRate`, except for a value left
  /// as the command line set it (`--latency` may exceed what a client may set, for tests).
  public func validate(state: State) throws(ActionValidationError) {
    do {
      if state.latencyMs != initial.latencyMs { try validate(.setLatency(ms: state.latencyMs)) }
    } catch {
      throw error.within("/latencyMs", for: "/ms")
    }
    do {
      if state.failRate != initial.failRate { try validate(.setFailRate(rate: state.failRate)) }
    } catch {
      throw error.within("/failRate", for: "/rate")
    }
  }

  public func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
    switch action {
    case .setOnline(let online):
      state.online = online
      return .run { [backend] _ in await backend.setOnline(online) }
    case .setLatency(let ms):
      state.latencyMs = ms
      return .run { [backend] _ in await backend.setLatency(ms: ms) }
    case .setFailRate(let rate):
      state.failRate = rate
      return .run { [backend] _ in await backend.setFailRate(rate) }
    case .setFallbackOnline(let online):
      state.fallback.online = online
      return .run { [backend] _ in await backend.setFallbackOnline(online) }
    case .setFallbackFailRate(let rate):
      state.fallback.failRate = rate
      return .run { [backend] _ in await backend.setFallbackFailRate(rate) }
    case .remoteUserEdit(let id, let name):
      return .run { [backend] send in
        if await backend.remoteUserEdit(id: id, name: name) == nil {
          await send(.internal(.remoteUserEditMissed(id: id)))
        }
      }
    case .remoteEdit(let noteId, let text):
      return .run { [backend] send in
        if await !backend.remoteEdit(noteId: noteId, text: text) {
          await send(.internal(.remoteEditMissed(noteId: noteId)))
        }
      }
    case .internal(.statusChanged(let status)):
      state = status
      return .none
    case .internal(.remoteEditMissed(let noteId)):
      return .emit(.toast(message: "The server has no note \(noteId)."))
    case .internal(.remoteUserEditMissed(let id)):
      return .emit(.toast(message: "The server has no user \(id)."))
    }
  }
}

import JSON
import StateKit

/// What a connection needs to share the stores with other clients (``Hub``): whether it owns
/// the process, how it starts watching a store another client opened, and how it hears that a
/// store it watched was closed.
extension Connection {
  enum Role: Equatable {
    /// The stdio client: its end is the end of the process.
    case owner
    /// A client attached through `--listen`, numbered from 1: its end ends only its
    /// connection.
    case attached(Int64)
  }

  /// The cause a store carries for this client's request `id`. Request ids are each client's
  /// own, so an attached client's id is tagged with its number (`{"client": n, "id": id}`: an
  /// object, which no request id can be); the owner's goes as it is, the hot path unchanged.
  func storeCause(_ id: JSON?) -> JSON? {
    guard case .attached(let number) = role, let id else { return id }
    return ["client": .integer(number), "id": id]
  }

  /// The `cause` this client sees in a patch: its own request id, or none for a change another
  /// client caused.
  func clientCause(_ cause: JSON?) -> JSON? {
    // `.none`, never `nil` alone: JSON is expressible by `nil` too, and that would be `null`.
    guard let cause else { return .none }
    if case .object(let tagged) = cause {
      guard case .attached(let number) = role, tagged["client"] == .integer(number) else {
        return .none
      }
      return tagged["id"]
    }
    guard role == .owner else { return .none }
    return cause
  }

  /// Starts watching a store: at its root when the client subscribes to everything.
  func watch(_ store: any AnyStore) {
    if subscribesToAll {
      subscriptions[store.id] = [Subscription(path: .root, version: store.version)]
    }
  }

  /// Forgets a closed store's subscriptions; a client that watched it hears `store/closed`.
  func storeClosed(_ storeID: String, reason: String) {
    guard subscriptions.removeValue(forKey: storeID)?.isEmpty == false else { return }
    let params: JSON = ["store": .string(storeID), "reason": .string(reason)]
    emit(.message(Self.notification("store/closed", params), barriers: [storeID]))
  }

  /// How many clients are attached through the socket (`store/list`, `initialize`).
  var attachedClients: JSON { .integer(Int64(hub?.attachedCount ?? 0)) }
}

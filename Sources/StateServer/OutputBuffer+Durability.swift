import JSON
import StateKit

/// Acknowledged means durable: the lines a batch produced go to the writer only after the
/// changes they report are committed, and a response to a request whose change could not be
/// committed becomes an error instead of an acknowledgement.
extension OutputBuffer {
  /// Commits every persistent store's recorded changes (one transaction, synchronously); on
  /// failure, turns each queued success response naming a store whose changes are not on disk
  /// (`dispatch` with either wait, `store/open`, `state/get`...) into a -32603 error with the
  /// reason. Patches and events still go out: the change did happen, in memory.
  func commitPersistentChanges() {
    guard let persistence = registry.persistence, persistence.hasPendingChanges else { return }
    do {
      try persistence.commit()
    } catch {
      log.error("commit failed", ["reason": error.reason])
      let failed = Set(error.stores)
      let refusal = RPCError.internalError(
        "the change was made but could not be saved, so it is not acknowledged: \(error.reason)")
      for (index, line) in lines.enumerated() {
        switch line {
        case .dispatched(let id, let store, _) where failed.contains(store):
          lines[index] = .failure(id: id, error: refusal)
        case .response(let id, let result, _):
          if case .string(let store)? = result["store"], failed.contains(store) {
            lines[index] = .failure(id: id, error: refusal)
          }
        case .serialized(let id, _, let barriers) where barriers.contains(where: failed.contains):
          lines[index] = .failure(id: id, error: refusal)
        default:
          break
        }
      }
    }
  }
}

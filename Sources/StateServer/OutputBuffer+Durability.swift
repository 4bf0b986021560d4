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
  ///
  /// Returns why the commit failed, nil when it did not.
  @discardableResult
  func commitPersistentChanges() -> CommitFailure? {
    guard let persistence = registry.persistence, persistence.hasPendingChanges else { return nil }
    do {
      try persistence.commit()
      return nil
    } catch {
      log.error("commit failed", ["reason": error.reason])
      let failed = Set(error.stores)
      let refusal = Self.notSaved(error.reason)
      for (index, line) in lines.enumerated() {
        switch line {
        case .dispatched(let id, let store, _) where failed.contains(store):
          lines[index] = .failure(id: id, error: refusal)
        case .response(let id, let result, _):
          if case .string(let store)? = result["store"], failed.contains(store) {
            lines[index] = .failure(id: id, error: refusal)
          }
        default:
          break
        }
      }
      return error
    }
  }

  /// The error that answers a request whose change is not on disk.
  static func notSaved(_ reason: String) -> RPCError {
    .internalError(
      "the change was made but could not be saved, so it is not acknowledged: \(reason)")
  }

  /// Commits this turn's lines before a response written while it is sent
  /// (``Connection/stream(_:id:)``): the changes of every persistent store first, then the
  /// lines. Returns the error that must answer instead when a store in `barriers` (those the
  /// response carries) could not be saved.
  func commit(before barriers: [String]) -> RPCError? {
    let failure = commitPersistentChanges()
    commit()
    guard let failure, failure.stores.contains(where: barriers.contains) else { return nil }
    return Self.notSaved(failure.reason)
  }
}

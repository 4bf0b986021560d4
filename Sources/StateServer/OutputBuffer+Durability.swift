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

  /// The line of a response written while it is sent (``Connection/stream(_:id:)``), queued
  /// behind this turn's lines, which are committed first (the changes of every persistent
  /// store, then the lines), so that nothing of the response leaves before the state it
  /// carries is on disk. The caller writes the text into what this returns; the writer thread
  /// sends it as it comes, never this thread, which writes it. When a store in `barriers` (those
  /// the response carries) could not be saved, nothing is queued: the error answers instead.
  func streamedLine(id: JSON, carrying barriers: [String]) -> Result<StreamedText, RPCError> {
    let failure = commitPersistentChanges()
    commit()
    if let failure, failure.stores.contains(where: barriers.contains) {
      return .failure(Self.notSaved(failure.reason))
    }
    let text = StreamedText(answering: id, budget: queue)
    queue.append([.streamed(text, barriers: barriers)]) { coalescer.compact(&$0) }
    return .success(text)
  }

  /// The line of a patch written while it is sent (``OutputBuffer/stream(_:held:)``), queued
  /// behind this turn's lines, which are committed first, as for a streamed response. It goes
  /// out whether or not its store's change could be saved, as every patch does (the change was
  /// made, in memory).
  func streamedPatchLine(of store: String) -> StreamedText {
    commit()
    let text = StreamedText(answering: nil, budget: queue)
    queue.append([.streamed(text, barriers: [store])]) { coalescer.compact(&$0) }
    return text
  }

  /// Sends a patch that carries a value left to the state (`HeldValue`: a large array replaced
  /// whole, by a rewind, a skip, an action that resets it) while it is written, as a streamed
  /// answer is: whatever this turn queued before it is committed first (the store's change is
  /// on disk before any of it leaves), its line is queued, then its text is written from the
  /// state a megabyte at a time, each piece handed to the writer thread as it is made. No tree
  /// of the value is built, and its text is never whole in memory. Nothing merges into it or
  /// across it (it is a barrier of its store).
  func stream(_ notice: PatchNotice, held: [HeldValue]) {
    notice.write(into: streamedPatchLine(of: notice.store), held: held, log: log)
  }
}

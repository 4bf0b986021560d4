import JSON
import StateKit

/// A request answered later (a dispatch waiting for "settled", `shutdown`): resolved exactly
/// once, by its work or by `$/cancelRequest`, whichever comes first.
@StateActor
final class PendingReply {
  let id: JSON
  private(set) var isResolved = false
  /// Receives the response; set by whoever writes it (the connection, or a batch).
  var onResolve: ((Outgoing) -> Void)?
  /// The work computing the result, cancelled when the request is cancelled.
  var work: Task<Void, Never>?
  /// Called after the response was handed on (the connection forgets the id).
  var onFinish: (() -> Void)?
  private var waiters: [CheckedContinuation<Void, Never>] = []

  init(id: JSON) {
    self.id = id
  }

  func succeed(_ result: JSON) {
    resolve(.response(id: id, result: result, barriers: []))
  }

  func fail(_ error: RPCError) {
    resolve(.failure(id: id, error: error))
  }

  private func resolve(_ response: Outgoing) {
    guard !isResolved else { return }
    isResolved = true
    work?.cancel()
    work = nil
    onResolve?(response)
    onResolve = nil
    onFinish?()
    onFinish = nil
    for waiter in waiters { waiter.resume() }
    waiters = []
  }

  /// Returns once the reply is resolved.
  func resolved() async {
    guard !isResolved else { return }
    await withCheckedContinuation { waiters.append($0) }
  }
}

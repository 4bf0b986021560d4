import JSON
import StateKit

/// Whether a client hears progress (and reads batch responses), and the work it can still hear
/// about or cancel.
struct ProgressRoutes {
  /// Set by `initialize` when the client says it speaks progress (`capabilities.progress`).
  var enabled = false
  /// Cleared by `initialize` when the client says it reads no batch responses
  /// (`capabilities.batch: false`): a batch is then answered one line per response.
  var readsBatches = true
  /// The work of each request that gave a `progressToken`, by request id, for
  /// `$/cancelRequest`; an entry leaves once its work ended.
  var work: [JSON: [Work]] = [:]

  struct Work {
    var store: String
    var transaction: Transaction
  }
}

/// `dispatch`'s `progressToken`: the progress its action's effects report reaches the client
/// as `$/progress` notifications, `{token, value: {kind, done, total?, message?, cancelled?}}`,
/// `begin` first and always one `end` once the last effect ended; `$/cancelRequest` with the
/// request's id cancels that work.
extension Connection {
  /// A token as the client gave it: a string or an integer (as LSP's `ProgressToken`); nil
  /// when absent or null.
  static func progressToken(_ token: JSON?) throws(RPCError) -> JSON? {
    switch token {
    case nil, .null?: return nil
    case .string?, .integer?: return token
    case let other?:
      throw .invalidParams(
        pointer: "/progressToken",
        reason: "expected a string or an integer naming the progress, got "
          + other.kindDescription)
    }
  }

  /// Tells the client the progress of what `transaction` started, when it speaks progress;
  /// keeps the work under the request's id for `$/cancelRequest` either way.
  ///
  /// Every token ends with one `end`, also when no effect reported (or none started): a
  /// client keeps a callback per token, and only the `end` tells it that it can drop it.
  func watchProgress(
    of store: any AnyStore, _ transaction: Transaction, token: JSON, id: JSON?
  ) {
    let storeID = store.id
    let tell: @StateActor (ProgressUpdate) -> Void = { [weak self] update in
      self?.emit(
        .message(
          Self.notification("$/progress", ["token": token, "value": Self.wire(update)]),
          barriers: [storeID]))
    }
    guard store.isRunning(transaction) else {
      // Nothing runs: the work is over already, so its `end` comes at once, before the
      // response (as the action's patch does).
      if progress.enabled { tell(.end(done: 0)) }
      return
    }
    if let id {
      forgetEndedWork()
      progress.work[id, default: []].append(.init(store: store.id, transaction: transaction))
    }
    guard progress.enabled else { return }
    store.observeProgress(of: transaction, tell)
  }

  /// `$/cancelRequest` of a dispatch whose work is still running: its effects are cancelled
  /// (each stops at its next suspension; a feature puts its state right with `onCancel`).
  func cancelWork(of id: JSON) {
    guard let work = progress.work.removeValue(forKey: id) else { return }
    for item in work { registry.store(item.store)?.cancel(item.transaction) }
  }

  /// Drops the entries whose work ended; called as work is added, so the table holds little
  /// more than the work running.
  private func forgetEndedWork() {
    progress.work = progress.work.compactMapValues { work in
      let running = work.filter { registry.store($0.store)?.isRunning($0.transaction) == true }
      return running.isEmpty ? nil : running
    }
  }

  /// A `$/progress` notification's `value`.
  static func wire(_ update: ProgressUpdate) -> JSON {
    var value: JSONObject = [
      "kind": .string(update.kind.rawValue), "done": .integer(Int64(update.progress.done)),
    ]
    if let total = update.progress.total { value["total"] = .integer(Int64(total)) }
    if let message = update.progress.message { value["message"] = .string(message) }
    if update.kind == .end { value["cancelled"] = .bool(update.cancelled) }
    return .object(value)
  }
}

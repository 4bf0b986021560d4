/// What the store knows of one transaction's progress: who watches it, whether it began, the
/// last report, and whether any of its effects was cancelled.
struct ProgressWatch {
  var observer: (@StateActor (ProgressUpdate) -> Void)?
  var begun = false
  var last = EffectProgress(done: 0)
  var cancelled = false
}

/// Progress of long effects, per transaction: an effect reports through its `Send`, and
/// whoever watches the action that started it hears `begin`, `report`s and one `end`.
extension Store {
  /// Calls `observer` with the progress of the effects `transaction` started (and of those
  /// the actions they fed back started): `begin` at the first report, `report` after, `end`
  /// once the last of them ended. The `end` comes also when none of them reported (then alone,
  /// `done` 0), so a watcher always learns that the work is over and can let go of what it
  /// keeps for it. Nothing when none runs now (``isRunning(_:)`` says so): that work is over.
  ///
  /// Call it right after `send`: effects run as tasks, which cannot report before the caller
  /// gives up the state actor.
  ///
  /// ```swift
  /// let transaction = store.send(.sync)
  /// store.observeProgress(of: transaction) { update in print(update.kind, update.progress) }
  /// ```
  public func observeProgress(
    of transaction: Transaction, _ observer: @escaping @StateActor (ProgressUpdate) -> Void
  ) {
    guard !isClosed, liveEffects[transaction] != nil else { return }
    progressWatches[transaction, default: ProgressWatch()].observer = observer
  }

  /// An effect of `context`'s transaction reported `progress` (through its `Send`).
  func reportProgress(_ progress: EffectProgress, of context: EffectContext) {
    let transaction = context.transaction
    guard !isClosed, context.generation == generation, liveEffects[transaction] != nil else {
      return
    }
    guard progressWatches[transaction] != nil || didReportProgress != nil else { return }
    var watch = progressWatches[transaction] ?? ProgressWatch()
    let update = ProgressUpdate(watch.begun ? .report : .begin, progress)
    watch.begun = true
    watch.last = progress
    progressWatches[transaction] = watch
    tell(watch, update, transaction)
  }

  /// An effect of `transaction` ended cancelled: its `end` says so.
  func progressCancelled(_ transaction: Transaction) {
    progressWatches[transaction]?.cancelled = true
  }

  /// The last effect of `transaction` ended: its progress ends. A watcher hears the `end` even
  /// when nothing began, so it can let go of the work; the test log (`didReportProgress`)
  /// lists only what effects reported, so work that never reported leaves it empty.
  func endProgress(of transaction: Transaction) {
    // Asked once per settled transaction: nearly always nobody watches, and an empty
    // dictionary answers that without hashing.
    guard !progressWatches.isEmpty, let watch = progressWatches.removeValue(forKey: transaction)
    else { return }
    let end = ProgressUpdate(
      .end, EffectProgress(done: watch.last.done, total: watch.last.total),
      cancelled: watch.cancelled)
    if watch.begun {
      tell(watch, end, transaction)
    } else {
      watch.observer?(end)
    }
  }

  /// The store closed: every watched progress ends, cancelled.
  func endAllProgress() {
    let watches = progressWatches
    progressWatches.removeAll()
    for (transaction, var watch) in watches.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
      watch.cancelled = true
      progressWatches[transaction] = watch
      endProgress(of: transaction)
    }
  }

  private func tell(_ watch: ProgressWatch, _ update: ProgressUpdate, _ transaction: Transaction) {
    watch.observer?(update)
    didReportProgress?(transaction, update)
  }
}

extension AnyStore {
  /// A store without effects has nothing to cancel.
  public func cancel(_ transaction: Transaction) {}
  /// A store without effects runs none.
  public func isRunning(_ transaction: Transaction) -> Bool { false }
  /// A store without effects reports no progress.
  public func observeProgress(
    of transaction: Transaction, _ observer: @escaping @StateActor (ProgressUpdate) -> Void
  ) {}
}

import JSON

extension Store {
  /// Starts keeping the last `limit` entries (0: none, only `sink` hears them) and reporting
  /// every entry and effect event to `sink`. History starts from the current state, which is
  /// the oldest one it can produce until the log fills.
  public func startHistory(limit: Int, sink: (@StateActor (HistoryRecord) -> Void)?) {
    guard limit > 0 || sink != nil else {
      history = nil
      historyBase = nil
      publisher.recordsReversal = false
      return
    }
    history = HistoryLog(limit: limit, version: version, sink: sink)
    historyBase = limit > 0 ? state : nil
    publisher.recordsReversal = limit > 0
  }

  /// Whether entries are being made (history or a recording is on).
  public var keepsHistory: Bool { history != nil }

  /// The oldest version whose state history can still produce (nil: no history kept).
  public var firstHeldVersion: UInt64? {
    guard let history, history.keepsEntries else { return nil }
    return history.firstVersion
  }

  /// `reduce` with history: the action is stamped with the wall-clock time (bound to
  /// `ReduceTime.current` while reducing), timed with its publication, and kept. Replay passes
  /// the recorded stamp and starts no effect. Returns the view patch it published when asked
  /// to (`returningPatch`, replay), else nothing.
  ///
  /// Inlined into its two callers, so that `reduce`, which asks for no patch, makes no copy of
  /// it for the return (a retain and a release).
  @inline(__always)
  @discardableResult
  func reduceRecording(
    _ action: F.Action, _ context: EffectContext, fromEffect: Bool, stamp: Int64? = nil,
    returningPatch: Bool = false
  ) -> [JSON] {
    guard let history else { return [] }
    // One clock read for the stamp and the start of the duration.
    let began = ReduceTime.nanoseconds()
    let at = stamp ?? ReduceTime.milliseconds(began)
    let seq = history.takeSeq()
    let saved = ReduceTime.set(at)
    let effect = feature.reduce(into: &state, action: action)
    ReduceTime.restore(saved)
    // No context to copy (its cause: a retain and a release) for an action without an effect.
    if stamp == nil, !effect.isNone {
      var inner = context
      inner.origin = seq
      start(effect, in: inner)
    }
    var patch: [JSON] = []
    var events: [JSON] = []
    publish(cause: context.cause, keeping: &patch, &events)
    let origin = HistoryEntry.Origin(
      request: context.cause, action: fromEffect ? context.origin : nil)
    let returned = returningPatch ? filled(patch, publishedAt: version) : []
    keep(
      HistoryLog.Item(
        seq: seq, kind: .action, version: version, payload: action, origin: origin,
        patch: consume patch, events: consume events, at: at,
        duration: ReduceTime.duration(since: began)), in: history)
    didReduce?(action, fromEffect)
    return returned
  }

  /// Events an effect emitted outside a reduce (`Store.run`), kept as an entry of their own.
  func recordEvents(_ publication: Publication, _ context: EffectContext) {
    guard let history else { return }
    keep(
      HistoryLog.Item(
        seq: history.takeSeq(), kind: .events, version: version, payload: (),
        origin: HistoryEntry.Origin(request: context.cause, action: context.origin),
        patch: publication.patch, events: publication.events, at: ReduceTime.now(),
        duration: .zero), in: history)
  }

  func keep(_ item: consuming HistoryLog.Item, in history: HistoryLog) {
    if history.keepsEntries { item.reversal = publisher.takeReversal() }
    // Moved out of the log only when there are any: copying the (usually empty) array cost a
    // retain and a release per action.
    var started: [EffectLife] = []
    if !history.starting.isEmpty {
      swap(&started, &history.starting)
      item.effects = started
    }
    guard let sink = history.sink else {
      // Nobody hears entries (the server without a recording): none is made, and no optional
      // one is made and destroyed per action.
      append(item, to: history)
      return
    }
    let made = entry(item)
    append(item, to: history)
    sink(.entry(made))
    for life in started { sink(.effect(store: id, life)) }
  }

  /// Keeps `item` in the log, and reduces the entries leaving it onto the checkpoint.
  private func append(_ item: consuming HistoryLog.Item, to history: HistoryLog) {
    let leaving = history.append(item)
    if leaving > 0 { advanceBase(past: leaving, in: history) }
  }

  /// Reduces the `count` oldest entries, which are leaving the log, onto the checkpoint in
  /// place (the store holds the only reference to its storage once the live state has moved
  /// on), in one loop once an interval: per entry, a cast back to the feature's action and
  /// the reduce. Effects are dropped, never started.
  @inline(never)
  private func advanceBase(past count: Int, in history: HistoryLog) {
    // Moved out first, so that `base` holds the only reference and each reduce edits in place.
    guard var base = historyBase else { return }
    historyBase = nil
    for offset in 0..<count {
      let (kind, payload, at, skipped) = history.takeLeaving(offset)
      if case .rewind = kind, let restored = payload as? F.State {
        base = restored
      } else if case .action = kind, !skipped, let action = Self.action(in: payload) {
        let saved = ReduceTime.set(at)
        _ = feature.reduce(into: &base, action: action)
        ReduceTime.restore(saved)
      }
    }
    historyBase = base
    history.dropLeaving(count)
  }

  /// The action an entry's payload holds: `payload as? F.Action`, by a comparison of types
  /// first instead of the runtime's dynamic cast, which searches conformances on every call in
  /// this unspecialized code. The payload's own type is compared with the feature's action type, so
  /// the value is only reinterpreted as the very type it has; any other type (a subclass, should
  /// an action type be a class) goes through the cast.
  static func action(in payload: any Sendable) -> F.Action? {
    func same<Payload>(_ value: Payload) -> F.Action? {
      guard Payload.self == F.Action.self else { return value as? F.Action }
      return unsafeBitCast(value, to: F.Action.self)
    }
    return same(payload)
  }

  /// `patch`, published at `version`, with each value it left to the state (`HeldValue`: a
  /// large array replaced whole, which history keeps without its value) encoded from the view
  /// at that version: the patch as it was sent. The patch itself when it holds no such value.
  func filled(_ patch: [JSON], publishedAt version: UInt64) -> [JSON] {
    guard patch.contains(where: HeldValue.isHeld) else { return patch }
    let value: (JSONPointer) -> JSON?
    if version == self.version {
      value = { self.publishedValue(at: $0) }
    } else if let past = try? pastView(at: version) {
      value = { past.value(at: $0) }
    } else if let whole = try? published(at: version) {
      value = { $0.value(in: whole) }
    } else {
      return patch
    }
    var filled = patch
    for (index, operation) in patch.enumerated() where HeldValue.isHeld(operation) {
      guard let text = operation["path"]?.stringValue,
        let path = try? JSONPointer(parsing: text), let found = value(path)
      else { continue }
      filled[index] = HeldValue.filling(operation, with: found)
    }
    return filled
  }

  /// The public form of an item; the action is encoded only when someone reads it.
  func entry(_ item: HistoryLog.Item) -> HistoryEntry {
    let action = item.kind == .action ? Self.action(in: item.payload) : nil
    return HistoryEntry(
      store: id, seq: item.seq, kind: item.kind, version: item.version,
      action: { action.flatMap { try? WireFormat.encode($0) } }, origin: item.origin,
      patch: filled(item.patch, publishedAt: item.version), events: item.events, at: item.at,
      duration: item.duration,
      effects: item.effects, skipped: item.skipped)
  }

  func effectStarted(_ key: UInt64, kind: String, _ context: EffectContext) {
    guard let history else { return }
    let life = EffectLife(
      effect: key, kind: kind, action: context.origin, status: .running,
      startedAt: ReduceTime.now(), duration: .zero)
    running[key]?.life = life
    running[key]?.started = ContinuousClock().now
    // Started by the action being reduced: it joins that action's entry when it is kept.
    if let origin = context.origin, origin == history.making {
      history.starting.append(life)
      return
    }
    history.update(life)
    history.sink?(.effect(store: id, life))
  }

  func effectEnded(
    _ life: EffectLife, started: ContinuousClock.Instant?, failed: Bool, cancelled: Bool
  ) {
    guard let history else { return }
    var life = life
    life.status = failed ? .failed : cancelled ? .cancelled : .finished
    life.duration = started.map { ContinuousClock().now - $0 } ?? .zero
    history.update(life)
    history.sink?(.effect(store: id, life))
  }

  /// Entries with a version above `since` (all held when nil), oldest first, at most `limit`
  /// but never ending inside a run of entries that share a version, so that paging by
  /// `since` = the last version received misses nothing.
  public func historyEntries(since: UInt64?, limit: Int) -> [HistoryEntry] {
    guard let history, history.keepsEntries, limit > 0 else { return [] }
    let start = since.map { history.firstSeq(after: $0) } ?? 0
    var items = history.items(from: start, limit: limit)
    // Complete the run of the last version, so that the next page starts after it.
    while let last = items.last, let next = history.item(last.seq + 1),
      next.version == last.version
    {
      items.append(next)
    }
    return items.map(entry)
  }

  /// The private state as it was at `version` (the last state of that version): the
  /// checkpoint with the actions after it reduced again at their recorded times, their effects
  /// dropped (never started). What `store/rewind` restores (the view snapshots cannot give the
  /// private state). Actions turned off by `history/skip` are left out, so after a skip this is
  /// the state at `version` on the timeline as it is now (StoreBranching.swift).
  public func state(at version: UInt64) throws(HistoryError) -> F.State {
    try state(at: version, skippedThen: [:])
  }

  /// The private state as it was when `version` was published: `state(at:)` with each action
  /// that a later `history/skip` toggled reduced (or not) as it was then. A skip recomputes the
  /// states after the action it toggles, but the views published before it stay
  /// (`published(at:)`).
  func state(asPublishedAt version: UInt64) throws(HistoryError) -> F.State {
    guard let history, history.keepsEntries else { throw .off }
    return try state(at: version, skippedThen: history.skippedFlags(at: version))
  }

  /// `state(at:)`, an action whose entry `skippedThen` names being skipped as it says.
  private func state(at version: UInt64, skippedThen: [UInt64: Bool]) throws(HistoryError)
    -> F.State
  {
    guard let history, history.keepsEntries else { throw .off }
    guard version <= self.version else { throw .future(current: self.version) }
    guard version >= history.firstVersion else { throw .evicted(oldest: history.firstVersion) }
    if version == self.version { return state }
    guard var past = historyBase else { throw .off }
    for item in history.path(to: version) {
      if case .rewind = item.kind, let restored = item.payload as? F.State {
        past = restored
      } else if case .action = item.kind, !(skippedThen[item.seq] ?? item.skipped),
        let action = Self.action(in: item.payload)
      {
        _ = ReduceTime.reducing(at: item.at) { feature.reduce(into: &past, action: action) }
      }
    }
    return past
  }

  /// The published view at `version`: the view now with the later entries taken back
  /// (HistoryLog.view(at:from:)). When a reversal does not apply (one that replaced a
  /// left-out array whole: its old elements were never encoded), the state as it was then,
  /// reduced again from the checkpoint, encoded.
  public func published(at version: UInt64) throws(HistoryError) -> JSON {
    if let history, history.keepsEntries, version <= self.version,
      version >= history.firstVersion
    {
      if version == self.version { return published }
      if let view = history.view(at: version, from: published) { return view }
    }
    let past = try state(asPublishedAt: version)
    return (try? JSONValueEncoder().encode(feature.view(of: past))) ?? .null
  }

  /// Makes the state at `version` current again, as a new version: every effect in flight is
  /// cancelled (and whatever it would still send dropped), and subscribers get one ordinary
  /// patch from the current view to the restored one. Returns the new version.
  @discardableResult
  public func rewind(to version: UInt64, cause: JSON?) throws(HistoryError) -> UInt64 {
    let past = try state(at: version)
    generation += 1
    for effect in running.values { effect.task.cancel() }
    let began = ReduceTime.nanoseconds()
    state = past
    let publication = publish(cause: cause)
    if let history {
      keep(
        HistoryLog.Item(
          seq: history.takeSeq(), kind: .rewind(to: version), version: self.version,
          payload: past, origin: HistoryEntry.Origin(request: cause, action: nil),
          patch: publication?.patch ?? [], events: [], at: ReduceTime.milliseconds(began),
          duration: ReduceTime.duration(since: began)), in: history)
    }
    return self.version
  }

  /// For replay: decodes a recorded wire action (public or internal), reduces it at the
  /// recorded time `at` without starting its effects, keeps it in history (so a recorded
  /// rewind replays too), and returns the view patch it made.
  public func replay(wire action: JSON, at: Int64) throws(ActionError) -> [JSON] {
    let decoding: Result<F.Action, ActionError> = WireFormat.$decodingRecorded.withValue(true) {
      do throws(ActionError) {
        return .success(try WireFormat.decodeAction(F.Action.self, from: action, allowed: nil))
      } catch {
        return .failure(error)
      }
    }
    let decoded = try decoding.get()
    if history == nil { startHistory(limit: 1, sink: nil) }
    let context = EffectContext(transaction: Transaction(rawValue: 0), cause: nil)
    return reduceRecording(decoded, context, fromEffect: false, stamp: at, returningPatch: true)
  }
}

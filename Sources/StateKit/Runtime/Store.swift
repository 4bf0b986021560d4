import JSON

/// Owns one feature's state; `send` is the only way in.
///
/// Reducers run on the state actor, one action at a time, in arrival order: an action sent
/// while another is being reduced (by `.send`, by an observer, by an effect) is queued and
/// reduced right after, never re-entrantly. Effects run as tasks and come back through
/// `send`. After each reduced action the store publishes what the server needs: the patch
/// from the previous view, the new version (raised by one only when the view changed) and
/// the events emitted, through `observer`, before `send` returns.
///
/// ```swift
/// let store = Store(feature: Counter())
/// store.observer = { publication in print(publication.patch) }
/// store.send(.increment)        // observer sees [{"op":"replace","path":"/count","value":1}]
/// ```
@StateActor
public final class Store<F: Feature>: AnyStore {
  /// The store's id on the wire (the feature's name for its default store).
  public let id: String
  /// The feature, with its dependencies.
  public let feature: F
  /// The private state. The store holds the only reference to its storage while reducing,
  /// so a reducer editing one element of a large collection edits it in place.
  public internal(set) var state: F.State
  /// 0 for a new store; raised by one for each reduced action that changed the view.
  public private(set) var version: UInt64
  /// Called with every publication, before `send` returns (see `AnyStore`).
  public var observer: (@StateActor (Publication) -> Void)?

  var publisher: ViewPublisher<F.View>
  /// How each publication's `statePatch` is made; `nil` (the default) makes none
  /// (Store+Journal.swift).
  var stateJournal: StateJournal<F.State>? {
    didSet { journals = stateJournal != nil }
  }
  /// `stateJournal != nil`, asked once per action: asking the optional itself looked up the
  /// generic `Optional<StateJournal<F.State>>` metadata every time in this unspecialized code.
  private var journals = false
  /// A walk of the private state found a large array replaced whole while the change was owed
  /// anyway: the next `takeStatePatch()` asks for the whole state (Store+Journal.swift).
  var journalOwesWholeState = false
  /// The values the publication being observed leaves to the state (`AnyStore.heldValues`):
  /// set only around that observer call, so that they, and the view they share the state's
  /// storage with, are let go before the state changes again.
  public private(set) var heldValues: [HeldValue] = []
  /// Called instead of `observer` for a publication that leaves values to the state.
  public var holdingObserver: (@StateActor (Publication, [HeldValue]) -> Void)?
  private let publicActions: Set<String>
  /// Payload-free public actions (`{"type": "increment"}`) by name, decoded once: such a wire
  /// object always decodes to the same value, and `Codable` was the largest cost of a
  /// dispatch. Only successfully decoded public names enter, so it holds at most one entry
  /// per public action.
  /// (Names in an array, found by position, rather than `[String: F.Action]`: the lookup then
  /// gives an `Int?`, where `F.Action?` cost a generic metadata lookup per dispatch in this
  /// unspecialized code; and a scan of a few short names compares a word or two each, where
  /// hashing the name costs more than the whole scan.)
  private var payloadFreeNames: [String] = []
  private var payloadFreeActions: [F.Action] = []
  private var queue: [Queued] = []
  /// Whether `queue` got an entry during this reduce; asking `queue.isEmpty` instead looked up
  /// the generic `Queued` metadata on every action.
  private var hasQueued = false
  private var queueHead = 0
  private var isReducing = false
  var pendingEvents: [JSON] = []
  private var nextTransaction: UInt64 = 0
  var isClosed = false
  /// Recent entries and what `--record` reports (StoreHistory.swift); nil when off.
  var history: HistoryLog?
  /// The history's checkpoint: the state before its oldest entry (`HistoryLog.baseSeq`).
  var historyBase: F.State?
  /// Raised by a rewind: actions sent by effects of an older generation are dropped, so an
  /// effect cancelled by a rewind cannot patch the restored state late.
  var generation: UInt64 = 0

  // Effect bookkeeping (Store+Effects.swift).
  var running: [UInt64: RunningEffect] = [:]
  var effectsByID: [EffectID: Set<UInt64>] = [:]
  var liveEffects: [Transaction: Int] = [:]
  var settledWaiters: [Transaction: [CheckedContinuation<Void, Never>]] = [:]
  var idleWaiters: [CheckedContinuation<Void, Never>] = []
  var nextEffectKey: UInt64 = 0
  let activity = EffectActivity()
  /// The progress of transactions someone watches (Store+Progress.swift).
  var progressWatches: [Transaction: ProgressWatch] = [:]
  /// Hears every transaction's progress, watched or not; for `TestStore`.
  @_spi(Testing) public var didReportProgress: (@StateActor (Transaction, ProgressUpdate) -> Void)?

  /// Called after every reduced action with the action, and whether it came from outside
  /// (`send`) or from an effect; for `TestStore`.
  @_spi(Testing) public var didReduce: (@StateActor (F.Action, _ fromEffect: Bool) -> Void)?
  /// Where programming errors go instead of ``Diagnostics`` (`TestStore` makes them test
  /// failures at `site`, or at the test's current step when the site is unknown).
  @_spi(Testing) public var diagnosticHandler: (@StateActor (String, CallSite?) -> Void)?

  private struct Queued {
    var action: F.Action
    var context: EffectContext
    var fromEffect: Bool
  }

  /// A store starting from `state` (the feature's `initialState` by default) at `version`.
  public init(feature: F, id: String? = nil, state: F.State? = nil, version: UInt64 = 0) {
    let state = state ?? feature.initialState
    self.id = id ?? F.name
    self.feature = feature
    self.state = state
    self.version = version
    self.publicActions = Set(F.caseNames.publicActions)
    self.publisher = ViewPublisher(feature.view(of: state))
  }

  /// A store for the server: `initial` is an RFC 7396 merge patch over the feature's
  /// initial state; `restoring` a persisted snapshot (private state and version), which wins
  /// over `initial`. Throws `ActionError.invalid` naming the field that does not decode.
  public convenience init(
    feature: F, id: String, initial: consuming JSON?,
    restoring: consuming (state: JSON, version: UInt64)?
  ) throws(ActionError) {
    // The saved tree is let go once decoded, before the view is built from the state.
    if let (state, version) = try Self.restore(consume restoring) {
      self.init(feature: feature, id: id, state: state, version: version)
    } else if initial != nil {
      let base: JSON
      do {
        base = try JSONValueEncoder().encode(feature.initialState)
      } catch {
        throw .invalid(pointer: "", reason: "the initial state does not encode: \(error)")
      }
      // `initial` is let go here: the client's parsed state (its request's only remaining
      // holder by now) is freed once decoded, before the view is built from the state.
      let state = try Self.decodeState(
        consuming: JSON.mergePatch(base, (consume initial) ?? .null), what: "initial state")
      do {
        try feature.validate(state: state)
      } catch {
        throw .invalid(pointer: error.pointer, reason: error.reason)
      }
      self.init(feature: feature, id: id, state: state)
    } else {
      self.init(feature: feature, id: id)
    }
  }

  /// The state decoded from `saved` and the version it resumes at. A snapshot taken mid-effect
  /// may decode into a settled state (a feature turns `saving` back into `idle`): that is
  /// another state, so it gets the next version, and a version never names two states. The
  /// feature says whether its decoding changed anything (`Feature.decodingChanged(_:from:)`);
  /// when it does not say, the whole state is encoded again and compared with `saved`. A
  /// spurious bump only costs a client a resync. Nil when there is nothing to restore.
  private static func restore(_ saved: consuming (state: JSON, version: UInt64)?)
    throws(ActionError) -> (F.State, UInt64)?
  {
    guard let (json, version) = consume saved else { return nil }
    // A large array left as text (`DeferredArrays.current`) is one too, where an empty array
    // stands in for it.
    if json.holdsElidedArray || DeferredArrays.current != nil {
      // A large array is decoded consuming, its parsed elements let go one by one: its JSON is
      // of no use after (the store keeps those elements in its typed state alone), and a
      // restore never holds the whole tree and the whole state at once. The feature compares
      // with the rest of what was saved; one that does not say is taken as changed.
      let rest = json.emptyingElidedArrays()
      let state = try decodeState(consuming: consume json, what: "snapshot")
      let changed = F.decodingChanged(state, from: rest) ?? true
      return (state, changed ? version &+ 1 : version)
    }
    let saved = (state: json, version: version)
    let state = try decodeState(saved.state, what: "snapshot")
    let changed =
      F.decodingChanged(state, from: saved.state)
      ?? ((try? JSONValueEncoder().encode(state))?.equalsByValue(saved.state) != true)
    return (state, changed ? saved.version &+ 1 : saved.version)
  }

  /// ``decodeState(_:what:)`` of a tree held nowhere else: its parts are let go as they are
  /// decoded (a large state's parsed elements one by one), so the open never holds the whole
  /// tree and the whole state at once.
  private static func decodeState(consuming json: consuming JSON, what: String)
    throws(ActionError) -> F.State
  {
    do {
      return try JSONValueDecoder().decode(F.State.self, consuming: json)
    } catch {
      throw .invalid(pointer: error.pointer, reason: "the \(what) does not decode: \(error.reason)")
    }
  }

  private static func decodeState(_ json: JSON, what: String) throws(ActionError) -> F.State {
    do {
      return try JSONValueDecoder().decode(F.State.self, from: json)
    } catch {
      throw .invalid(pointer: error.pointer, reason: "the \(what) does not decode: \(error.reason)")
    }
  }

  isolated deinit {
    for effect in running.values { effect.task.cancel() }
  }

  /// The feature's wire name.
  public var featureName: String { F.name }

  /// The current view, encoded; kept up to date by applying each publication's patch, and
  /// the elements of a large `IdentifiedArray` encoded from the state when asked
  /// (`ArrayElision`): O(view) then.
  public var published: JSON { publisher.materialized(feature.view(of: state)) }

  /// The published value at `path`: inside a large `IdentifiedArray`, only the element on the
  /// path is encoded.
  public func publishedValue(at path: JSONPointer) -> JSON? {
    publisher.value(at: path, in: feature.view(of: state))
  }

  /// Whether the published view has a value at `path`, encoding at most one element.
  public func hasPublishedValue(at path: JSONPointer) -> Bool {
    publisher.hasValue(at: path, in: feature.view(of: state))
  }

  /// Whether the published value at `path` is an object: a left-out array is not encoded to
  /// find it is an array.
  public func publishedValueIsObject(at path: JSONPointer?) -> Bool {
    guard let path else { return false }
    return publisher.isObject(at: path, in: feature.view(of: state))
  }

  /// The elements `published` encodes from the state when asked (a lower bound of its size).
  public var publishedElementsLeftOut: Int { publisher.leftOutElements() }

  /// Those of them at or under `path` (a lower bound of the size of the value there).
  public func publishedElementsLeftOut(under path: JSONPointer) -> Int {
    publisher.leftOutElements(under: path)
  }

  /// Writes `published`'s text without building its tree: a large `IdentifiedArray`'s
  /// elements are encoded and written a batch at a time.
  public func writePublished(to writer: inout JSONWriter) throws {
    try publisher.write(feature.view(of: state), to: &writer)
  }

  /// The private state, encoded, for persistence.
  public var snapshot: JSON {
    do {
      return try JSONValueEncoder().encode(state)
    } catch {
      report("the state of store \(id) does not encode: \(error)")
      return .null
    }
  }

  /// Reduces `action` (an in-process send: no public check, no validation) and everything
  /// it sends synchronously, publishing after each.
  @discardableResult
  public func send(
    _ action: F.Action, cause: JSON? = nil, fileID: String = #fileID,
    filePath: String = #filePath, line: Int = #line, column: Int = #column
  ) -> Transaction {
    if isClosed {
      diagnose(
        "\(action) was sent to the closed store \(id) and dropped",
        at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }
    return send(action, cause: cause)
  }

  private func send(_ action: F.Action, cause: JSON?) -> Transaction {
    nextTransaction += 1
    let transaction = Transaction(rawValue: nextTransaction)
    enqueue(
      action, EffectContext(transaction: transaction, cause: cause, generation: generation),
      fromEffect: false)
    return transaction
  }

  /// Decodes, checks and reduces a client's action (see `AnyStore.send(wire:cause:)`).
  ///
  /// Goes through the feature's conformance (``Feature/_send(wire:cause:to:)``), whose witness
  /// is compiled where the feature's type is known: the server calls this through the
  /// `AnyStore` existential, where this class's own code runs unspecialized.
  public func send(wire action: JSON, cause: JSON?) throws(ActionError) -> Transaction {
    try F._send(wire: action, cause: cause, to: self)
  }

  /// What `send(wire:cause:)` does, for ``Feature/_send(wire:cause:to:)``.
  @usableFromInline
  func receive(wire action: JSON, cause: JSON?) throws(ActionError) -> Transaction {
    let decoded = try decode(wire: action)
    do {
      try feature.validate(decoded)
    } catch {
      throw .invalid(pointer: error.pointer, reason: error.reason)
    }
    return send(decoded, cause: cause)
  }

  private func decode(wire action: JSON) throws(ActionError) -> F.Action {
    guard case .object(let fields) = action, fields.count == 1 else {
      return try WireFormat.decodeAction(F.Action.self, from: action, allowed: publicActions)
    }
    // The name compared where it lies: copied out of the object, it cost a retain and a
    // release for its box and as many for the string.
    let cached = fields.withValue(forKey: "type") { type -> Int? in
      guard case .string(let name) = type else { return nil }
      return payloadFreeNames.firstIndex(of: name)
    }
    if let cached, let known = cached { return payloadFreeActions[known] }
    guard case .string(let name)? = fields["type"] else {
      return try WireFormat.decodeAction(F.Action.self, from: action, allowed: publicActions)
    }
    let decoded = try WireFormat.decodeAction(F.Action.self, from: action, allowed: publicActions)
    payloadFreeNames.append(name)
    payloadFreeActions.append(decoded)
    return decoded
  }

  /// Queues `action` and, unless a reduce is already under way further up the stack, reduces
  /// the queue dry. The queue is what makes reduction one-at-a-time without locks: everything
  /// runs on the state actor, and a nested send only appends.
  func enqueue(_ action: F.Action, _ context: EffectContext, fromEffect: Bool) {
    guard !isClosed, !fromEffect || context.generation == generation else { return }
    guard !isReducing else {
      queueForLater(action, context, fromEffect: fromEffect)
      return
    }
    isReducing = true
    defer { isReducing = false }
    // Not reducing means the queue is empty: reduce this action without queueing it (the
    // usual case; the queue's bookkeeping cost as much as reducing a counter).
    reduce(action, context, fromEffect: fromEffect)
    if hasQueued { reduceQueued() }
  }

  @inline(never)
  private func queueForLater(_ action: F.Action, _ context: EffectContext, fromEffect: Bool) {
    queue.append(Queued(action: action, context: context, fromEffect: fromEffect))
    hasQueued = true
  }

  /// Reduces what was sent while reducing, in order, until the queue is dry. A function of its
  /// own (not inlined) so that the usual path above never touches the generic `Queued` type,
  /// whose metadata this unspecialized code would look up on every action.
  @inline(never)
  private func reduceQueued() {
    while queueHead < queue.count {
      let next = queue[queueHead]
      queueHead += 1
      reduce(next.action, next.context, fromEffect: next.fromEffect)
    }
    queue.removeAll(keepingCapacity: true)
    queueHead = 0
    hasQueued = false
  }

  private func reduce(_ action: F.Action, _ context: EffectContext, fromEffect: Bool) {
    guard !isClosed else { return }
    if history != nil {
      reduceRecording(action, context, fromEffect: fromEffect)
      return
    }
    let effect = feature.reduce(into: &state, action: action)
    start(effect, in: context)
    // Nobody reads the publication after the observer: moved out and dropped, not returned.
    var patch: [JSON] = []
    var events: [JSON] = []
    publish(cause: context.cause, keeping: &patch, &events)
    didReduce?(action, fromEffect)
  }

  /// Publishes the change of view since the last publication and the pending events; returns
  /// what it published (nil: nothing changed).
  @discardableResult
  func publish(cause: JSON?) -> Publication? {
    var patch: [JSON] = []
    var events: [JSON] = []
    var statePatch: [JSON]?
    var held: [HeldValue]?
    guard let from = prepare(&patch, &events, &statePatch, &held) else { return nil }
    let publication = Publication(
      store: id, from: from, to: version, patch: patch, events: events, cause: cause,
      statePatch: statePatch)
    if let held {
      observe(publication, holding: held)
    } else {
      observer?(publication)
    }
    return publication
  }

  /// Hands a publication that leaves values to the state to the holding observer with those
  /// values, or to the observer with them in `heldValues`; lets them go after.
  @inline(never)
  private func observe(_ publication: Publication, holding held: [HeldValue]) {
    if let holdingObserver { return holdingObserver(publication, held) }
    heldValues = held
    observer?(publication)
    heldValues = []
  }

  /// `publish(cause:)` for a caller that keeps the patch and events (history, or nobody): they
  /// are moved into the publication and back out once the observer has seen it. (Returning the
  /// publication cost a copy of it, a retain and a release per reference it holds.)
  func publish(cause: JSON?, keeping patch: inout [JSON], _ events: inout [JSON]) {
    var statePatch: [JSON]?
    var held: [HeldValue]?
    guard let from = prepare(&patch, &events, &statePatch, &held) else { return }
    var publication = Publication(
      store: id, from: from, to: version, patch: [], events: [], cause: cause,
      statePatch: statePatch)
    swap(&patch, &publication.patch)
    swap(&events, &publication.events)
    if let held {
      observe(publication, holding: held)
    } else {
      observer?(publication)
    }
    swap(&patch, &publication.patch)
    swap(&events, &publication.events)
  }

  /// What the next publication carries: the view's patch, the pending events (moved out, not
  /// copied and emptied) and, when journaling, the state's patch; raises the version when the
  /// view changed and returns the version before, or nil when there is nothing to publish.
  private func prepare(
    _ patch: inout [JSON], _ events: inout [JSON], _ statePatch: inout [JSON]?,
    _ held: inout [HeldValue]?
  ) -> UInt64? {
    patch = publisher.update(to: feature.view(of: state))
    if publisher.problem != nil { reportPublisherProblem() }
    if publisher.holdsValues { held = makeHeldValues() }
    if journals { statePatch = journalStatePatch(viewPatch: patch, viewHeld: held != nil) }
    guard !patch.isEmpty || !pendingEvents.isEmpty || statePatch?.isEmpty == false else {
      return nil
    }
    let from = version
    if !patch.isEmpty { version += 1 }
    if !pendingEvents.isEmpty { swap(&events, &pendingEvents) }
    return from
  }

  /// The values the last update left to the state (`HeldValue`), read from the view now; apart,
  /// so that the usual path never makes the view a second time.
  @inline(never)
  private func makeHeldValues() -> [HeldValue] {
    let view = feature.view(of: state)
    return publisher.takeHeld().map { HeldValue($0, in: view) }
  }

  /// Reports (and clears) the publisher's problem; apart, so that the usual path does not
  /// copy the optional message out to look at it.
  @inline(never)
  private func reportPublisherProblem() {
    guard let problem = publisher.problem else { return }
    publisher.problem = nil
    diagnose(problem, at: nil)
  }
}

extension Store {
  /// Reports a programming error: to `diagnosticHandler` when a test set one, else through
  /// ``Diagnostics`` with the site, so the log line names the file and line to fix.
  func diagnose(_ message: String, at site: CallSite?) {
    if let diagnosticHandler {
      diagnosticHandler(message, site)
    } else {
      report(site.map { "\($0): \(message)" } ?? message)
    }
  }
}

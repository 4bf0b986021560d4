import JSON

/// A store that can give the change of its private state, so a journal commits the change
/// instead of the whole state. `Store<F>` is one; the server falls back to whole snapshots for
/// any other `AnyStore`.
@StateActor
public protocol JournaledStore: AnyStore {
  /// From now on the store keeps its private state as JSON and reports its changes (see
  /// `Publication.statePatch` and `takeStatePatch()`). Costs one full encoding now, then
  /// O(change); none now when `encoded` is the state's encoding already (a restored store's
  /// saved state, which its decoding did not change: the JSON read is kept, not encoded
  /// again). Idempotent.
  func journalState(startingFrom encoded: consuming JSON?)

  /// Whether every publication carries its `statePatch` (the view is the state, so the view
  /// patch is the state patch). Otherwise a publication whose view changed leaves it `nil`
  /// and the change is owed: `takeStatePatch()` walks the private state once for every
  /// action since the last walk, which is what a group commit wants.
  var publishesStatePatches: Bool { get }

  /// The private state's change since the last walk, as RFC 6902 operations, in one walk;
  /// empty when the publications carry it; nil when the change is best written as the whole
  /// state (a large array replaced whole: `writeJournaledState(to:)` writes it as text, where a
  /// patch would hold a tree of its elements).
  func takeStatePatch() -> [JSON]?

  /// The private state as JSON, as of the last walk: shared rather than encoded (O(1)) once
  /// `journalState()` was called, but for the elements of a large `IdentifiedArray`, which
  /// the store keeps only in its typed state and encodes here (`ArrayElision`).
  var journaledState: JSON { get }

  /// `journaledState` as text, without building the tree of a large `IdentifiedArray`'s
  /// elements (`ViewPublisher.write(_:to:)`).
  func writeJournaledState(to writer: inout JSONWriter) throws

  /// `writeJournaledState(to:)` held apart from the store, to be written later on another
  /// thread (a compaction's snapshot, off the state's actor): it shares the state and what the
  /// journal keeps of it, so taking it is O(1) but for a large array's elements, and the
  /// store's next change copies the parts it edits.
  func journaledStateText() -> @Sendable (inout JSONWriter) throws -> Void

  /// Whether `journaledState` is the JSON the store keeps, shared (O(1)); false when it is
  /// encoded when asked (a large `IdentifiedArray`'s elements, which only the state holds).
  var journaledStateIsShared: Bool { get }
}

extension JournaledStore {
  /// `journalState(startingFrom:)` with the state encoded now.
  public func journalState() { journalState(startingFrom: nil) }
}

/// How a store turns its changes of private state into patches.
enum StateJournal<State: Encodable & Equatable> {
  /// The view is the state: its patch is the state's patch, and its JSON the state's.
  case sameAsView
  /// The private state is published to a second `ViewPublisher`, walked like the view:
  /// `IdentifiedArray`s publish only their logged changes, so the cost follows the change.
  /// `owed`: actions reduced since its last walk.
  case own(ViewPublisher<State>, owed: Int)
}

extension Store: JournaledStore {
  /// Actions a walk may owe before the store walks by itself: an `IdentifiedArray` logs its
  /// last 256 to 512 changes, and a walk that finds the log too short re-encodes the array.
  static var maximumOwedActions: Int { 128 }

  public func journalState(startingFrom encoded: consuming JSON?) {
    guard stateJournal == nil else { return }
    guard F.View.self != F.State.self else {
      stateJournal = .sameAsView
      return
    }
    let publisher =
      if let encoded = consume encoded {
        ViewPublisher.restored(state, encoded: encoded, replacesUpdatedElements: true)
      } else {
        ViewPublisher(state, replacesUpdatedElements: true)
      }
    stateJournal = .own(publisher, owed: 0)
  }

  public var publishesStatePatches: Bool {
    if case .own = stateJournal { return false }
    return true
  }

  public var journaledState: JSON {
    switch stateJournal {
    case .sameAsView?: return published
    case .own(let publisher, _)?: return publisher.materialized(state)
    case nil: return snapshot
    }
  }

  public var journaledStateIsShared: Bool {
    switch stateJournal {
    case .sameAsView?: return publisher.leftOutElements() == 0
    case .own(let publisher, _)?: return publisher.leftOutElements() == 0
    case nil: return false
    }
  }

  public func writeJournaledState(to writer: inout JSONWriter) throws {
    try journaledStateText()(&writer)
  }

  public func journaledStateText() -> @Sendable (inout JSONWriter) throws -> Void {
    switch stateJournal {
    case .sameAsView?:
      let text = publisher.text(of: feature.view(of: state))
      return { try text.write(to: &$0) }
    case .own(let publisher, _)?:
      let text = publisher.text(of: state)
      return { try text.write(to: &$0) }
    case nil:
      let snapshot = self.snapshot
      return { try $0.write(snapshot) }
    }
  }

  public func takeStatePatch() -> [JSON]? {
    let walked = walkState(wholeIfHeld: true) ?? []
    guard journalOwesWholeState else { return walked }
    journalOwesWholeState = false
    return nil
  }

  /// The private state's patch for the publication under way: the view's when they are one
  /// (nil when it leaves a value to the state, `viewHeld`: the journal then writes the whole
  /// state); for a separate state, a walk when the view did not change (only a walk can tell
  /// whether the private state did), else `nil` and the change is owed (bounded, see above).
  func journalStatePatch(viewPatch: [JSON], viewHeld: Bool) -> [JSON]? {
    guard let owed = owedActions else {
      if case .sameAsView? = stateJournal { return viewHeld ? nil : viewPatch }
      return nil
    }
    if viewPatch.isEmpty || owed >= Self.maximumOwedActions {
      // A publication whose view did not change is made only when this walk finds a change, so
      // that walk gives its patch (a held value encoded into it); one whose view changed may
      // leave a whole state owed (`journalOwesWholeState`), written by the next commit.
      let walked = walkState(wholeIfHeld: !viewPatch.isEmpty)
      if case .some(nil) = walked {
        journalOwesWholeState = true
        return nil
      }
      return walked ?? nil
    }
    // Counted without a second reference to the publisher's JSON ever being alive while it
    // is edited (a bound payload in scope during `walkState` copied all 100,000 notes).
    if case .own(let publisher, _)? = stateJournal.take() {
      stateJournal = .own(publisher, owed: owed + 1)
    }
    return nil
  }

  /// Actions owed to a walk, or `nil` when the store has no state publisher of its own.
  private var owedActions: Int? {
    if case .own(_, let owed)? = stateJournal { return owed }
    return nil
  }

  /// Walks the private state against its JSON; `nil` unless it has one of its own. A walk that
  /// leaves a value to the state (`HeldValue`) gives `.some(nil)` when `wholeIfHeld` (the journal
  /// writes the whole state instead), else the patch with that value encoded.
  private func walkState(wholeIfHeld: Bool) -> [JSON]?? {
    // Moved out, not copied: the publisher must own its JSON uniquely to apply the patch in
    // place. A second reference (a `switch` over the stored property binding its payload)
    // made every action copy the whole array of 100,000 notes.
    guard let journal = stateJournal.take() else { return nil }
    switch consume journal {
    case .sameAsView:
      stateJournal = .sameAsView
      return nil
    case .own(var publisher, _):
      var patch = publisher.update(to: state)
      let held = publisher.takeHeld()
      stateJournal = .own(publisher, owed: 0)
      guard !held.isEmpty else { return patch }
      if wholeIfHeld { return .some(nil) }
      for place in held {
        let value = HeldValue(place, in: state)
        guard let encoded = try? value.encoded() else { return .some(nil) }
        patch[place.operation] = HeldValue.filling(patch[place.operation], with: encoded)
      }
      return patch
    }
  }
}

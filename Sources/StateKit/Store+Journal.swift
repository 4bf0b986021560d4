import JSON

/// A store that can publish the change of its private state with each publication, so a
/// journal commits the change instead of the whole state. `Store<F>` is one; the server falls
/// back to whole snapshots for any other `AnyStore`.
@MainActor
public protocol JournaledStore: AnyStore {
  /// From now on every publication carries `statePatch`, the RFC 6902 change of the private
  /// state (see `Publication.statePatch`), and `journaledState` is kept current. Costs one
  /// full encoding now, then O(change) per action. Idempotent.
  func journalState()

  /// The private state as JSON, as of the last publication, shared rather than encoded: O(1)
  /// once `journalState()` was called. A journal compacts from it without stalling the store.
  var journaledState: JSON { get }
}

/// How a store turns each action's change of private state into a patch.
enum StateJournal<State: Encodable & Equatable> {
  /// The view is the state: its patch is the state's patch, and its JSON the state's.
  case sameAsView
  /// The private state is published to a second `ViewPublisher`, walked like the view:
  /// `IdentifiedArray`s publish only their logged changes, so the cost follows the change.
  case own(ViewPublisher<State>)
}

extension Store: JournaledStore {
  public func journalState() {
    guard stateJournal == nil else { return }
    stateJournal = F.View.self == F.State.self ? .sameAsView : .own(ViewPublisher(state))
  }

  public var journaledState: JSON {
    switch stateJournal {
    case .sameAsView?: return publisher.json
    case .own(let publisher)?: return publisher.json
    case nil: return snapshot
    }
  }

  /// The private state's patch for the publication under way.
  func journalStatePatch(viewPatch: [JSON]) -> [JSON]? {
    // Moved out, not copied: the publisher must own its JSON uniquely to apply the patch in
    // place. A second reference (a `switch` over the stored property binding its payload)
    // made every action copy the whole array of 100,000 notes.
    guard let journal = stateJournal.take() else { return nil }
    switch consume journal {
    case .sameAsView:
      stateJournal = .sameAsView
      return viewPatch
    case .own(var publisher):
      let patch = publisher.update(to: state)
      stateJournal = .own(publisher)
      return patch
    }
  }
}

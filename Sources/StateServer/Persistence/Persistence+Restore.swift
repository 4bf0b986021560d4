import JSON
import StateKit

/// Start-up: a persistent store's saved state read back and checked, or set aside.
extension Persistence {
  /// The saved state and version of `storeID`, or `nil` if there is none or it cannot be used.
  /// Data of another feature, another schema version, or that fails a check (a version out of
  /// range, a patch that does not apply) is set aside (tables `set_aside` and
  /// `journal_set_aside`) with a warning naming what was wrong.
  ///
  /// `leavingText`: a large snapshot's large arrays are left as text, for the store's decode
  /// to read (``takeRestoredText(of:)``); saved data that does not restore so is read again
  /// as before, which says what is wrong with it.
  public func restore(storeID: String, feature: String, schemaVersion: Int)
    -> (state: JSON, version: UInt64)?
  {
    restore(storeID: storeID, feature: feature, schemaVersion: schemaVersion, leavingText: false)
  }

  func restore(storeID: String, feature: String, schemaVersion: Int, leavingText: Bool)
    -> (state: JSON, version: UInt64)?
  {
    restored[storeID] = nil
    restoredText[storeID] = nil
    restoredSchemaVersions[storeID] = schemaVersion
    let loaded: SavedRows?
    do {
      loaded = try database.load(store: storeID, leavingText: leavingText)
    } catch {
      warn("cannot read the saved state of store \(storeID) (\(error)); starting fresh")
      return nil
    }
    // Moved, not copied, into the replay: a copy alive beside it (`guard let rows`) held the
    // snapshot's tree a second time, so the journal's first edit copied the tree's path to it,
    // its large array included, before editing the copy.
    guard let rows = consume loaded else { return nil }
    if case .leftAsText = rows.state {
      // Saved data with anything wrong is read again whole, which says what.
      return restoreLeavingText(consume rows, storeID, feature, schemaVersion)
        ?? restore(
          storeID: storeID, feature: feature, schemaVersion: schemaVersion, leavingText: false)
    }
    let saved: SavedState
    do {
      saved = try SavedState(consume rows)
    } catch {
      setAside(storeID: storeID, reason: error.reason)
      return nil
    }
    guard saved.feature == feature else {
      setAside(storeID: storeID, reason: "saved by feature \(saved.feature), not \(feature)")
      return nil
    }
    guard saved.schemaVersion == schemaVersion else {
      setAside(
        storeID: storeID,
        reason: "schema version \(saved.schemaVersion), expected \(schemaVersion)")
      return nil
    }
    // Kept for `attach`, the state included: a store that resumes unchanged journals from it.
    // Not a state holding a large array: the journal leaves its elements to the typed state
    // and starts without this JSON, and a copy held here would keep the whole tree alive
    // through the decode, which lets go of each element's tree as it decodes it.
    var kept = saved
    if saved.state.holdsElidedArray { kept.state = .null }
    restored[storeID] = kept
    return (saved.state, saved.version)
  }

  /// ``restore(storeID:feature:schemaVersion:)`` of `rows`, a large snapshot with its large
  /// arrays left as text; nil for saved data with anything wrong (the caller reads it again
  /// whole, and sets it aside if it must).
  private func restoreLeavingText(
    _ rows: consuming SavedRows, _ storeID: String, _ feature: String, _ schemaVersion: Int
  ) -> (state: JSON, version: UInt64)? {
    guard let saved = try? SavedState(consume rows), let text = saved.text,
      saved.feature == feature, saved.schemaVersion == schemaVersion
    else { return nil }
    // As for a state holding a large array: the journal starts from the typed state.
    var kept = saved
    kept.state = .null
    kept.text = nil
    restored[storeID] = kept
    restoredText[storeID] = text
    inform(
      "store \(storeID): restored with \(text.arrays.count) large array(s) read from the "
        + "snapshot's text as the store decodes them")
    return (saved.state, saved.version)
  }

  /// The saved state of `storeID` read again whole, after its decode from text failed.
  func restoreAgainWhole(storeID: String, feature: String, schemaVersion: Int)
    -> (state: JSON, version: UInt64)?
  {
    warn(
      "the saved state of store \(storeID) did not decode with its large arrays read from "
        + "text; reading it again whole")
    return restore(storeID: storeID, feature: feature, schemaVersion: schemaVersion)
  }

  /// The large arrays the last restore of `storeID` left as text (``DeferredArrays``), which
  /// the store's decode reads; taken once.
  func takeRestoredText(of storeID: String) -> DeferredArrays? {
    restoredText.removeValue(forKey: storeID)
  }

  /// The version of `storeID`'s saved data, from its snapshot row and its last journal row
  /// alone (two indexed reads, whatever the state's size); nil when there is none.
  public func savedVersion(of storeID: String) -> UInt64? {
    guard let version = try? database.savedVersion(store: storeID) else { return nil }
    return version
  }

  /// The feature whose data `storeID` holds on disk, if any: a store id is bound to one
  /// feature, so that opening it as another cannot push its data aside.
  public func savedFeature(of storeID: String) -> String? {
    guard let value = try? database.savedFeature(store: storeID) else { return nil }
    return value.text ?? value.description
  }

  /// Moves the saved state of `storeID` aside so the store starts fresh; call it when the
  /// feature cannot decode a restored snapshot. The old state stays in the database.
  public func setAside(storeID: String, reason: String) {
    restored[storeID] = nil
    warn(
      "the saved state of store \(storeID) cannot be used (\(reason)); "
        + "set it aside in \(databasePath ?? "memory") (tables set_aside, journal_set_aside) "
        + "and starting fresh")
    do {
      try database.setAside(store: storeID, reason: reason)
    } catch {
      warn("could not set aside the state of store \(storeID): \(error)")
    }
  }
}

import JSON

/// A store's saved state as read back and checked: the snapshot with the journal applied.
///
/// Nothing read from the database is trusted: a hand-edited or damaged row (a negative
/// version, text where a number belongs, a patch that does not apply) makes the whole store's
/// data unusable, and the reason names the value, so it can be set aside with a warning that
/// says what was wrong, never crash the server nor be silently overwritten.
struct SavedState {
  /// The largest version a store may have: 2^53, the largest integer every JSON client reads
  /// exactly (a JavaScript number); far beyond what a store reaches by counting.
  static let maxVersion: UInt64 = 1 << 53

  var feature: String
  var schemaVersion: Int
  var state: JSON
  var version: UInt64
  /// Bytes of the snapshot's text and of the journal's patches: what compaction weighs.
  var snapshotBytes: Int
  var journalBytes: Int
  /// The last journal `seq` applied.
  var lastSeq: Int64?

  /// Why saved rows cannot be used.
  struct Unusable: Error {
    var reason: String
  }

  /// Checks `rows` and applies the journal to the snapshot.
  init(_ rows: SavedRows) throws(Unusable) {
    if let problem = rows.problem { throw Unusable(reason: problem) }
    guard let row = rows.snapshot else {
      throw Unusable(reason: "\(rows.journal.count) journal rows but no snapshot to apply them to")
    }
    guard row.count == 4, case .text(let feature) = row[0] else {
      throw Unusable(reason: "feature \(row.first?.description ?? "missing") is not a name")
    }
    guard case .integer(let schemaVersion) = row[1] else {
      throw Unusable(reason: "schema_version \(row[1].description) is not a whole number")
    }
    let version = try Self.version(row[2], what: "version")
    guard case .text(let text) = row[3] else {
      throw Unusable(reason: "state \(row[3].description) is not JSON text")
    }
    var state: JSON
    do {
      state = try JSON(parsing: text)
    } catch {
      throw Unusable(reason: "state is not valid JSON: \(error)")
    }
    self.feature = feature
    self.schemaVersion = Int(schemaVersion)
    self.snapshotBytes = text.utf8.count
    var current = version
    var journalBytes = 0
    for entry in rows.journal {
      guard entry.count == 3, case .integer(let seq) = entry[0], case .text(let patch) = entry[2]
      else {
        throw Unusable(reason: "journal row \(entry.first?.description ?? "?") is malformed")
      }
      let next = try Self.version(entry[1], what: "journal row \(seq): version")
      guard next >= current else {
        throw Unusable(
          reason: "journal row \(seq) goes back from version \(current) to \(next)")
      }
      do {
        try JSONPatch(json: try JSON(parsing: patch)).apply(to: &state)
      } catch {
        throw Unusable(reason: "journal row \(seq) (version \(next)) does not apply: \(error)")
      }
      current = next
      journalBytes += patch.utf8.count
      lastSeq = seq
    }
    self.state = state
    self.version = current
    self.journalBytes = journalBytes
  }

  /// A version read back: a whole number from 0 to `maxVersion`, nothing else.
  static func version(_ value: SQLiteValue, what: String) throws(Unusable) -> UInt64 {
    guard case .integer(let n) = value, n >= 0, UInt64(n) <= maxVersion else {
      throw Unusable(
        reason: "\(what) \(value.description) is not a whole number from 0 to \(maxVersion)")
    }
    return UInt64(n)
  }
}

/// A store's rows as read, before any check.
struct SavedRows {
  var store: String
  /// `feature, schema_version, version, state`.
  var snapshot: [SQLiteValue]?
  /// `seq, version, patch` each, in order.
  var journal: [[SQLiteValue]]
  /// Why the snapshot could not be read back (its pieces are missing or damaged).
  var problem: String? = nil
}

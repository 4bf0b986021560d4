import JSON
import StateKit

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
  /// The snapshot's large arrays left as text, which `state` holds empty arrays in place of,
  /// with the journal's changes to their elements (`DeferredArrays.apply(_:to:retiring:)`).
  var text: DeferredArrays?

  /// Why saved rows cannot be used.
  struct Unusable: Error {
    var reason: String
  }

  /// Checks `rows` and applies the journal to the snapshot, whose parsed state it takes.
  init(_ rows: consuming SavedRows) throws(Unusable) {
    if let problem = rows.problem { throw Unusable(reason: problem) }
    guard let row = rows.snapshot else {
      throw Unusable(reason: "\(rows.journal.count) journal rows but no snapshot to apply them to")
    }
    guard row.count == 3, case .text(let feature) = row[0] else {
      throw Unusable(reason: "feature \(row.first?.description ?? "missing") is not a name")
    }
    guard case .integer(let schemaVersion) = row[1] else {
      throw Unusable(reason: "schema_version \(row[1].description) is not a whole number")
    }
    let version = try Self.version(row[2], what: "version")
    // Taken out, so that the journal edits the state's only reference in place.
    var state: JSON
    switch rows.takeState() {
    case .parsed(let json, let bytes):
      state = json
      self.snapshotBytes = bytes
    case .leftAsText(let json, let text, let bytes):
      state = json
      self.text = text
      self.snapshotBytes = bytes
    case .invalid(let error):
      throw Unusable(reason: "state is not valid JSON: \(error)")
    case .notText(let value):
      throw Unusable(reason: "state \(value.description) is not JSON text")
    }
    self.feature = feature
    self.schemaVersion = Int(schemaVersion)
    var current = version
    var journalBytes = 0
    // What the journal replaces is let go only once it is all applied (`apply(to:retiring:)`):
    // the snapshot's memory then comes free in long runs when the decode lets it go, which the
    // decoded elements are made in, instead of new memory.
    var retired: [JSON] = []
    // The journal edits the state in place only while nothing else holds its tree: a second
    // holder made the first edit copy the path to what it edits, a large array included.
    assert(rows.journal.isEmpty || state.isObjectHeldAlone(), "the snapshot's tree is held twice")
    for position in rows.journal.indices {
      let entry = rows.journal[position]
      // Each row's text is let go once applied.
      rows.journal[position] = []
      guard entry.count == 3, case .integer(let seq) = entry[0], case .text(let patch) = entry[2]
      else {
        throw Unusable(reason: "journal row \(entry.first?.description ?? "?") is malformed")
      }
      let next = try Self.version(entry[1], what: "journal row \(seq): version")
      guard next >= current else {
        throw Unusable(
          reason: "journal row \(seq) goes back from version \(current) to \(next)")
      }
      let retiredBefore = retired.count
      do {
        let parsed = try JSONPatch(json: try JSON(parsing: patch))
        if let text {
          try text.apply(parsed, to: &state, retiring: &retired)
        } else {
          try parsed.apply(to: &state, retiring: &retired)
        }
      } catch {
        throw Unusable(reason: "journal row \(seq) (version \(next)) does not apply: \(error)")
      }
      // A row that replaced a large array whole (a reset, a sort) frees long stretches by
      // itself: what was retired goes at once rather than stay beside its replacement.
      if retired[retiredBefore...].contains(where: { $0.holdsElidedArray }) { retired = [] }
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

/// A store's rows as read, before any check but the snapshot's parse.
struct SavedRows {
  var store: String
  /// `feature, schema_version, version` of the snapshot row.
  var snapshot: [SQLiteValue]?
  /// The snapshot row's `state`, parsed where it was read.
  var state: SavedText
  /// `seq, version, patch` each, in order.
  var journal: [[SQLiteValue]]
  /// Why the snapshot could not be read back (its pieces are missing or damaged).
  var problem: String?

  init(
    store: String, snapshot: [SQLiteValue]?, state: SavedText, journal: [[SQLiteValue]],
    problem: String? = nil
  ) {
    self.store = store
    self.snapshot = snapshot
    self.state = state
    self.journal = journal
    self.problem = problem
  }

  /// Rows with a whole snapshot row (`feature, schema_version, version, state`), its state
  /// parsed here.
  init(store: String, snapshot row: [SQLiteValue]?, journal: [[SQLiteValue]]) {
    var state = SavedText.notText(.null)
    if let row, row.count == 4 {
      if case .text(var text) = row[3] {
        state = text.withUTF8 { SavedText(parsing: UnsafeRawBufferPointer($0)) }
      } else {
        state = .notText(row[3])
      }
    }
    self.init(
      store: store, snapshot: row.map { Array($0.prefix(3)) }, state: state, journal: journal)
  }

  /// The state, moved out.
  mutating func takeState() -> SavedText {
    var taken = SavedText.notText(.null)
    swap(&taken, &state)
    return taken
  }
}

/// A snapshot's state as read: parsed from the bytes where they lay (SQLite's buffer, or the
/// pieces assembled), with no second copy of the text.
enum SavedText {
  /// The state, and the length of its text in bytes.
  case parsed(JSON, bytes: Int)
  /// The state with its large arrays left as `text` (empty arrays stand in their places).
  case leftAsText(JSON, text: DeferredArrays, bytes: Int)
  case invalid(JSONParseError)
  /// The column held no text (a number, NULL).
  case notText(SQLiteValue)

  /// `mapped` parsed with its arrays of a megabyte or more left as text, kept by the result
  /// (`parsed` when it has none): nil for a snapshot below ``LineFramer/discardingLength``,
  /// and for one that does not parse as it stands (the caller parses it as before, which says
  /// why).
  init?(parsingLeavingText mapped: MappedBytes) {
    let bytes = UnsafeRawBufferPointer(mapped.bytes)
    guard bytes.count >= LineFramer.discardingLength,
      let (value, arrays) = JSON.parsingDeferringArrays(bytes, under: [])
    else { return nil }
    guard !arrays.isEmpty else {
      self = .parsed(value, bytes: bytes.count)
      return
    }
    self = .leftAsText(
      value, text: DeferredArrays(bytes: bytes, arrays: arrays, keeper: mapped),
      bytes: bytes.count)
  }

  /// `bytes` parsed, each megabyte's pages given back behind the parse
  /// (`JSONParseOptions.discardsParsedBytes`): a large snapshot is never held whole beside its
  /// tree. `invalid` when they do not parse, with no repair tried: the bytes are gone by then.
  init(parsingGivingBack bytes: UnsafeMutableRawBufferPointer) {
    do {
      self = .parsed(
        try JSON(parsing: UnsafeRawBufferPointer(bytes), options: .discardsParsedBytes),
        bytes: bytes.count)
    } catch {
      self = .invalid(error)
    }
  }

  /// `bytes` parsed. Text that is not UTF-8 is parsed as SQLite's text was read before it was
  /// parsed in place: its bad bytes replaced by U+FFFD.
  init(parsing bytes: UnsafeRawBufferPointer) {
    do {
      self = .parsed(try JSON(parsing: bytes), bytes: bytes.count)
      return
    } catch {
      self = .invalid(error)
    }
    let repaired = String(decoding: bytes, as: UTF8.self)
    guard repaired.utf8.count != bytes.count || !repaired.utf8.elementsEqual(bytes) else { return }
    do {
      self = .parsed(try JSON(parsing: repaired), bytes: bytes.count)
    } catch {
      self = .invalid(error)
    }
  }
}

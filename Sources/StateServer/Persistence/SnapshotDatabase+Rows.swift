import CSQLite
import FoundationEssentials

/// Reading and writing the rows of the stores: snapshots, journal entries, rows set aside.
extension SnapshotDatabase {
  /// The rows saved for `store`, unchecked (`SavedState` checks them) but for the snapshot's
  /// state, parsed from pages of its own that the parse gives back as it goes
  /// (`SQLiteConnection.withBytes`); `nil` if none. A snapshot written in pieces comes back
  /// whole, with the journal rows it does not cover.
  ///
  /// `leavingText`: a large snapshot (written whole or in pieces) is parsed with its large
  /// arrays left as text (`SavedText.leftAsText`), read by the store's decode.
  func load(store: String, leavingText: Bool = false) throws(SQLiteError) -> SavedRows? {
    let connection = try open()
    var snapshot: [SQLiteValue]?
    var state = SavedText.notText(.null)
    var pieces: SnapshotPieces?
    // `store` is the table's key: one row at most. The state is not a column of the result,
    // which would have SQLite read it whole into a buffer of its own: `typeof` reads its
    // type alone.
    var textRow: Int64?
    try connection.forEachRow(
      "SELECT feature, schema_version, version, typeof(state), rowid FROM snapshots WHERE store = ?",
      [.text(store)]
    ) { row in
      snapshot = (0..<3).map(row.value)
      if row.value(3) == .text("text") { textRow = row.value(4).integer }
    }
    if snapshot != nil, textRow == nil {
      state = .notText(
        try connection.query("SELECT state FROM snapshots WHERE store = ?", [.text(store)])
          .first?.first ?? .null)
    }
    if let textRow {
      let text = try connection.bytes(of: "snapshots", column: "state", rowid: textRow)
      pieces = SnapshotPieces(marker: UnsafeRawBufferPointer(text.bytes))
      if pieces == nil {
        let left = leavingText ? SavedText(parsingLeavingText: text) : nil
        state = left ?? SavedText(parsingGivingBack: text.bytes)
      }
      if case .invalid = state, pieces == nil {
        // Given back as it was parsed: read again, for the repair of text that is not UTF-8.
        state = try connection.withBytes(of: "snapshots", column: "state", rowid: textRow) {
          SavedText(parsing: UnsafeRawBufferPointer($0))
        }
      }
    }
    var covered = Int64.min
    var problem: String?
    if let pieces, leavingText, pieces.bytes >= LineFramer.discardingLength,
      case .success(let mapped) = try pieces.assembleMapped(store: store, on: connection),
      let left = SavedText(parsingLeavingText: mapped)
    {
      covered = pieces.snapshot
      state = left
    } else if let pieces {
      covered = pieces.snapshot
      switch try pieces.assembleBytes(store: store, on: connection) {
      case .success(var bytes):
        state = bytes.withUnsafeMutableBytes { SavedText(parsingGivingBack: $0) }
        // Given back as it was parsed: assembled again for the repair and the check.
        if case .invalid = state,
          case .success(let again) = try pieces.assembleBytes(store: store, on: connection)
        {
          state = again.withUnsafeBytes { SavedText(parsing: $0) }
          if case .invalid = state, String(validating: again, as: UTF8.self) == nil {
            problem = "snapshot \(pieces.snapshot) is not UTF-8 text"
          }
        }
      case .failure(let reason): problem = reason.reason
      }
    }
    let journal = try connection.query(
      "SELECT seq, version, patch FROM journal WHERE store = ? AND seq > ? ORDER BY seq",
      [.text(store), .integer(covered)])
    if snapshot == nil && journal.isEmpty { return nil }
    return SavedRows(
      store: store, snapshot: snapshot, state: state, journal: journal, problem: problem)
  }

  /// The version of the last change saved for `store` (the later of its last journal row's and
  /// its snapshot's), or nil when nothing is saved. Reads no state.
  func savedVersion(store: String) throws(SQLiteError) -> UInt64? {
    let connection = try open()
    let journal = try connection.query(
      "SELECT version FROM journal WHERE store = ? ORDER BY seq DESC LIMIT 1", [.text(store)]
    ).first?.first?.integer
    let snapshot = try connection.query(
      "SELECT version FROM snapshots WHERE store = ?", [.text(store)]
    ).first?.first?.integer
    // Journal rows a compacted snapshot covers may linger until they are cleaned up.
    guard let version = [journal, snapshot].compactMap({ $0 }).max(), version >= 0 else {
      return nil
    }
    return UInt64(version)
  }

  /// The feature whose data `store` holds, if it holds any.
  func savedFeature(store: String) throws(SQLiteError) -> SQLiteValue? {
    try open().query("SELECT feature FROM snapshots WHERE store = ?", [.text(store)]).first?.first
  }

  /// Writes one group of changes in one transaction: after a crash either all of it or none
  /// of it is on disk. Returns the last journal `seq` written for each store.
  @discardableResult
  func write(_ group: [StoreWrite]) throws(SQLiteError) -> [String: Int64] {
    guard !group.isEmpty else { return [:] }
    if let damage = background?.damage {
      // Writing on would bury what is left readable under new pages; the file stays as it is.
      throw SQLiteError(
        code: SQLITE_CORRUPT,
        message:
          "the state database failed its integrity check (quick_check: \(damage)) and is no "
          + "longer written to; stop the server and move \(path ?? "it") aside to start fresh")
    }
    let now = Self.timestamp()
    let connection = try open()
    var lastSeq: [String: Int64] = [:]
    try connection.execute("BEGIN IMMEDIATE")
    do throws(SQLiteError) {
      for write in group {
        if let seq = try Self.apply(write, on: connection, at: now) { lastSeq[write.store] = seq }
      }
      try connection.execute("COMMIT")
    } catch {
      try? connection.execute("ROLLBACK")
      throw error
    }
    walBytes += group.reduce(0) { total, write in
      total + (write.snapshot?.state.utf8.count ?? 0)
        + write.journal.reduce(0) { $0 + $1.patch.utf8.count }
    }
    if walBytes > Self.checkpointEvery, let background {
      walBytes = 0
      background.checkpoint()
    }
    return lastSeq
  }

  /// One store's part of a transaction under way; returns the last journal `seq` it added.
  static func apply(_ write: StoreWrite, on connection: SQLiteConnection, at now: String)
    throws(SQLiteError) -> Int64?
  {
    if let snapshot = write.snapshot {
      try connection.query(
        """
        INSERT OR REPLACE INTO snapshots (store, feature, schema_version, version, state, saved_at)
        VALUES (?, ?, ?, ?, ?, ?)
        """,
        [
          .text(snapshot.store), .text(snapshot.feature),
          .integer(Int64(snapshot.schemaVersion)),
          .integer(Int64(bitPattern: snapshot.version)), .text(snapshot.state), .text(now),
        ])
      try connection.query(
        "DELETE FROM journal WHERE store = ? AND seq <= ?",
        [.text(snapshot.store), .integer(write.journalCovered ?? .max)])
    }
    var lastSeq: Int64?
    for entry in write.journal {
      try connection.query(
        "INSERT INTO journal (store, version, patch) VALUES (?, ?, ?)",
        [.text(write.store), .integer(Int64(bitPattern: entry.version)), .text(entry.patch)])
      lastSeq = connection.lastInsertedRowID
    }
    return lastSeq
  }

  /// Writes snapshots alone (tests, and tools seeding a database).
  func save(_ snapshots: [Snapshot]) throws(SQLiteError) {
    try write(snapshots.map { StoreWrite(store: $0.store, snapshot: $0, journal: []) })
  }

  /// Moves the rows of `store` (snapshot and journal) into `set_aside` and
  /// `journal_set_aside` with `reason`, so the store starts fresh while the old state stays
  /// recoverable by hand.
  func setAside(store: String, reason: String) throws(SQLiteError) {
    let connection = try open()
    let now = Self.timestamp()
    try connection.execute("BEGIN IMMEDIATE")
    do throws(SQLiteError) {
      try SnapshotPieces.assembleForSetAside(store: store, on: connection)
      try connection.query(
        """
        INSERT INTO set_aside
          SELECT store, feature, schema_version, version, state, saved_at, ?, ? FROM snapshots
          WHERE store = ?
        """, [.text(now), .text(reason), .text(store)])
      try connection.query("DELETE FROM snapshots WHERE store = ?", [.text(store)])
      try connection.query(
        """
        INSERT INTO journal_set_aside
          SELECT seq, store, version, patch, ?, ? FROM journal WHERE store = ? ORDER BY seq
        """, [.text(now), .text(reason), .text(store)])
      try connection.query("DELETE FROM journal WHERE store = ?", [.text(store)])
      try connection.execute("COMMIT")
    } catch {
      try? connection.execute("ROLLBACK")
      throw error
    }
  }

  /// Rows set aside so far, oldest first: `(store, reason)`. For tests and diagnostics.
  func setAsideRows() throws(SQLiteError) -> [(store: String, reason: String)] {
    try open().query("SELECT store, reason FROM set_aside ORDER BY rowid").compactMap { row in
      guard let store = row[0].text, let reason = row[1].text else { return nil }
      return (store, reason)
    }
  }

  /// How many journal rows `store` has (tests: compaction is visible here).
  func journalCount(store: String) throws(SQLiteError) -> Int {
    Int(
      try open().query("SELECT count(*) FROM journal WHERE store = ?", [.text(store)])
        .first?.first?.integer ?? 0)
  }

  /// How many snapshot pieces `store` has (tests: nothing is left behind).
  func pieceCount(store: String) throws(SQLiteError) -> Int {
    Int(
      try open().query("SELECT count(*) FROM snapshot_pieces WHERE store = ?", [.text(store)])
        .first?.first?.integer ?? 0)
  }

  /// Runs `sql` on the database's own connection (tests damage rows with it).
  func execute(_ sql: String) throws(SQLiteError) {
    try open().execute(sql)
  }

  /// Copies every committed change into the main file and empties the WAL, then closes: after
  /// a clean exit the `-wal` file holds nothing, so losing or damaging it loses nothing.
  func checkpointAndClose() throws(SQLiteError) {
    background?.close()
    background = nil
    defer { connection = nil }
    guard let connection, !isReadOnly, path != nil else { return }
    try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
  }
}

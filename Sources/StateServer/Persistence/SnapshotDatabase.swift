import CSQLite
import FoundationEssentials

/// The SQLite database of every persistent store: one snapshot row per store, and the journal
/// of changes committed since (restore = snapshot + journal, in `seq` order).
///
/// Opening never fails: a file that is not a database or is damaged is renamed aside
/// (`stateserver.sqlite.set-aside-20261129T174600Z`) with a warning and a fresh one is created;
/// a table with other columns than ours is renamed aside (`snapshots_set_aside_...`); a file we
/// may not write is opened read-only (`isReadOnly`); if nothing works (an unwritable
/// directory), the database lives in memory for this run. Nothing is ever deleted.
final class SnapshotDatabase {
  /// The layout of the tables below; a file with a newer layout is set aside, not misread.
  /// Layout 1 had no journal, layout 2 no snapshot pieces: they open as they are, the missing
  /// tables are added.
  static let layoutVersion: Int64 = 3
  static let fileName = "stateserver.sqlite"

  /// `nil` when not even an in-memory database could be made (memory exhausted), or after
  /// `close()`: every call then fails with an error the caller reports.
  private var connection: SQLiteConnection?
  /// Where the database lives, or `nil` when it is in memory.
  let path: String?
  /// The file could be read but not written: stores are restored, changes are not saved.
  private(set) var isReadOnly = false
  /// Writes compacted snapshots and checkpoints off the state actor (a file database only).
  private(set) var background: BackgroundWriter?
  /// Bytes committed since the last checkpoint was asked for.
  private var walBytes = 0
  /// The WAL is checkpointed (in the background) once this much was committed to it.
  static let checkpointEvery = 4 << 20

  /// Each table and its columns, in order: a table found with other columns is set aside.
  static let tables: [(name: String, columns: [String], create: String)] = [
    (
      "snapshots", ["store", "feature", "schema_version", "version", "state", "saved_at"],
      """
      CREATE TABLE snapshots (
        store TEXT PRIMARY KEY NOT NULL, feature TEXT NOT NULL, schema_version INTEGER NOT NULL,
        version INTEGER NOT NULL, state TEXT NOT NULL, saved_at TEXT NOT NULL)
      """
    ),
    (
      "journal", ["seq", "store", "version", "patch"],
      """
      CREATE TABLE journal (
        seq INTEGER PRIMARY KEY AUTOINCREMENT, store TEXT NOT NULL, version INTEGER NOT NULL,
        patch TEXT NOT NULL);
      CREATE INDEX journal_by_store ON journal (store, seq)
      """
    ),
    (
      // A compacted snapshot, written in pieces by short transactions (SnapshotPieces.swift);
      // its `snapshots` row names it (`pieces <snapshot> <count> <bytes>`).
      "snapshot_pieces", ["store", "snapshot", "piece", "bytes"],
      """
      CREATE TABLE snapshot_pieces (
        store TEXT NOT NULL, snapshot INTEGER NOT NULL, piece INTEGER NOT NULL,
        bytes BLOB NOT NULL, PRIMARY KEY (store, snapshot, piece))
      """
    ),
    (
      "set_aside",
      [
        "store", "feature", "schema_version", "version", "state", "saved_at", "set_aside_at",
        "reason",
      ],
      """
      CREATE TABLE set_aside (
        store TEXT NOT NULL, feature TEXT NOT NULL, schema_version INTEGER NOT NULL,
        version INTEGER NOT NULL, state TEXT NOT NULL, saved_at TEXT NOT NULL,
        set_aside_at TEXT NOT NULL, reason TEXT NOT NULL)
      """
    ),
    (
      "journal_set_aside", ["seq", "store", "version", "patch", "set_aside_at", "reason"],
      """
      CREATE TABLE journal_set_aside (
        seq INTEGER, store TEXT, version, patch, set_aside_at TEXT NOT NULL, reason TEXT NOT NULL)
      """
    ),
  ]

  /// Opens the database in `directory` (created if missing), or in memory when `nil`.
  init(directory: String?, warn: (String) -> Void) {
    guard let directory else {
      connection = Self.openInMemory()
      path = nil
      return
    }
    let path = FilePath.join(directory, Self.fileName)
    do {
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true)
      (connection, isReadOnly) = try Self.open(path: path, warn: warn)
      self.path = path
      startBackground(path: path)
      return
    } catch let error as SQLiteError where error.isUndecodable || error.code == -1 {
      let moved = Self.setAside(path: path)
      warn(
        "the state database \(path) could not be read (\(error.message)); "
          + "moved it to \(moved) and starting with fresh state")
    } catch {
      warn(
        "cannot use the state directory \(directory) (\(error)); "
          + "keeping state in memory for this run")
      connection = Self.openInMemory()
      self.path = nil
      return
    }
    do {
      (connection, isReadOnly) = try Self.open(path: path, warn: warn)
      self.path = path
      startBackground(path: path)
    } catch {
      warn("cannot create \(path) (\(error)); keeping state in memory for this run")
      connection = Self.openInMemory()
      self.path = nil
    }
  }

  /// Moves checkpoints off the main connection (whose commits then never copy the WAL into
  /// the main file themselves) when a second connection can be opened.
  private func startBackground(path: String) {
    guard !isReadOnly, let writer = BackgroundWriter(path: path),
      (try? connection?.execute("PRAGMA wal_autocheckpoint = 0")) != nil
    else { return }
    background = writer
  }

  /// Opens and checks a database file: SQLite reads a file lazily, so a damaged one is only
  /// noticed by reading it, which `quick_check` does for every page. A file that cannot be
  /// written is reopened read-only.
  private static func open(path: String, warn: (String) -> Void) throws(SQLiteError)
    -> (SQLiteConnection, readOnly: Bool)
  {
    let connection = try SQLiteConnection(path: path)
    // A commit waits for a compaction's write (see Persistence+Compaction) rather than fail.
    try connection.execute("PRAGMA busy_timeout = 10000")
    let check = try connection.query("PRAGMA quick_check")
    guard check.first?.first?.text == "ok" else {
      throw SQLiteError(
        code: SQLITE_CORRUPT, message: "quick_check: \(check.first?.first?.text ?? "no answer")")
    }
    let layout = try connection.query("PRAGMA user_version").first?.first?.integer ?? 0
    guard layout <= layoutVersion else {
      // A newer stateserver wrote it; reading it with this layout would misread it.
      throw SQLiteError(code: -1, message: "written by a newer stateserver (layout \(layout))")
    }
    if connection.isReadOnly { return (connection, true) }
    do {
      try connection.execute("PRAGMA journal_mode = WAL")
      try connection.execute("PRAGMA synchronous = NORMAL")
      try checkTables(connection, warn: warn)
      try connection.execute("PRAGMA user_version = \(layoutVersion)")
    } catch  where error.code & 0xFF == SQLITE_READONLY {
      return (try SQLiteConnection(path: path, readOnly: true), true)
    }
    return (connection, false)
  }

  /// Creates missing tables; renames aside a table whose columns are not ours (another
  /// program's, or damaged by hand), so one bad table never fails every save.
  private static func checkTables(_ connection: SQLiteConnection, warn: (String) -> Void)
    throws(SQLiteError)
  {
    for table in tables {
      let columns = try connection.query("PRAGMA table_info(\(table.name))").compactMap {
        $0.count > 1 ? $0[1].text : nil
      }
      if columns == table.columns { continue }
      if !columns.isEmpty {
        let aside = "\(table.name)_set_aside_\(timestamp(compact: true))"
        try connection.execute("ALTER TABLE \(table.name) RENAME TO \"\(aside)\"")
        // The index follows its table; drop it by name so ours can be created.
        try connection.execute("DROP INDEX IF EXISTS journal_by_store")
        warn(
          "table \(table.name) of the state database has columns (\(columns.joined(separator: ", "))), "
            + "expected (\(table.columns.joined(separator: ", "))); renamed it to \(aside), "
            + "kept as is, and made a fresh one")
      }
      try connection.execute(table.create)
    }
  }

  private static func openInMemory() -> SQLiteConnection? {
    let connection = try? SQLiteConnection(path: ":memory:")
    for table in tables {
      guard (try? connection?.execute(table.create)) != nil else { return nil }
    }
    return connection
  }

  /// Renames the database and its journal files with a timestamp; returns the new name.
  private static func setAside(path: String) -> String {
    var moved = "\(path).set-aside-\(timestamp(compact: true))"
    // Two set-asides in one second must not overwrite each other.
    var counter = 1
    while FileManager.default.fileExists(atPath: moved) {
      counter += 1
      moved = "\(path).set-aside-\(timestamp(compact: true))-\(counter)"
    }
    for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: path + suffix) {
      try? FileManager.default.moveItem(atPath: path + suffix, toPath: moved + suffix)
    }
    return moved
  }

  static func timestamp(compact: Bool = false) -> String {
    let style = Date.ISO8601FormatStyle(timeZone: .gmt)
    let text = Date().formatted(style)
    return compact
      ? text.filter { $0 != "-" && $0 != ":" } : text
  }

  // MARK: Rows

  private func open() throws(SQLiteError) -> SQLiteConnection {
    guard let connection else {
      throw SQLiteError(code: SQLITE_CANTOPEN, message: "the state database is closed")
    }
    return connection
  }

  /// The rows saved for `store`, unchecked (`SavedState` checks them), or `nil` if none. A
  /// snapshot written in pieces comes back whole, with the journal rows it does not cover.
  func load(store: String) throws(SQLiteError) -> SavedRows? {
    let connection = try open()
    var snapshot = try connection.query(
      "SELECT feature, schema_version, version, state FROM snapshots WHERE store = ?",
      [.text(store)]
    ).first
    var covered = Int64.min
    var problem: String?
    if let row = snapshot, row.count == 4, let pieces = SnapshotPieces(marker: row[3].text) {
      covered = pieces.snapshot
      switch try pieces.assemble(store: store, on: connection) {
      case .success(let state): snapshot?[3] = .text(state)
      case .failure(let reason): problem = reason.reason
      }
    }
    let journal = try connection.query(
      "SELECT seq, version, patch FROM journal WHERE store = ? AND seq > ? ORDER BY seq",
      [.text(store), .integer(covered)])
    if snapshot == nil && journal.isEmpty { return nil }
    return SavedRows(store: store, snapshot: snapshot, journal: journal, problem: problem)
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

/// One store's part of a group commit: an optional snapshot (which replaces the journal up
/// to `journalCovered`, or all of it when `nil`), then journal entries in order.
struct StoreWrite {
  var store: String
  var snapshot: Snapshot?
  /// The last journal `seq` the snapshot includes; `nil`: every row so far.
  var journalCovered: Int64?
  var journal: [(version: UInt64, patch: String)]

  init(
    store: String, snapshot: Snapshot? = nil, journalCovered: Int64? = nil,
    journal: [(version: UInt64, patch: String)]
  ) {
    self.store = store
    self.snapshot = snapshot
    self.journalCovered = journalCovered
    self.journal = journal
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

import CSQLite
import FoundationEssentials

/// The SQLite database holding every persistent store's snapshot, one row per store.
///
/// Opening never fails: a file that is not a database or is damaged is renamed aside
/// (`stateserver.sqlite.set-aside-20261129T174600Z`) with a warning and a fresh one is created;
/// if even that is impossible (an unwritable directory), the database lives in memory for this
/// run. Nothing is ever deleted.
final class SnapshotDatabase {
  /// The layout of the tables below; a file with a newer layout is set aside, not misread.
  static let layoutVersion: Int64 = 1
  static let fileName = "stateserver.sqlite"

  /// `nil` only when not even an in-memory database could be made (memory exhausted): every
  /// call then fails with an error the caller reports, and the server runs on unpersisted.
  private let connection: SQLiteConnection?
  /// Where the database lives, or `nil` when it is in memory.
  let path: String?

  private static let layout = """
    CREATE TABLE IF NOT EXISTS snapshots (
      store TEXT PRIMARY KEY NOT NULL,
      feature TEXT NOT NULL,
      schema_version INTEGER NOT NULL,
      version INTEGER NOT NULL,
      state TEXT NOT NULL,
      saved_at TEXT NOT NULL
    );
    CREATE TABLE IF NOT EXISTS set_aside (
      store TEXT NOT NULL,
      feature TEXT NOT NULL,
      schema_version INTEGER NOT NULL,
      version INTEGER NOT NULL,
      state TEXT NOT NULL,
      saved_at TEXT NOT NULL,
      set_aside_at TEXT NOT NULL,
      reason TEXT NOT NULL
    );
    """

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
      connection = try Self.open(path: path)
      self.path = path
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
      connection = try Self.open(path: path)
      self.path = path
    } catch {
      warn("cannot create \(path) (\(error)); keeping state in memory for this run")
      connection = Self.openInMemory()
      self.path = nil
    }
  }

  /// Opens and checks a database file: SQLite reads a file lazily, so a damaged one is only
  /// noticed by reading it, which `quick_check` does for every page.
  private static func open(path: String) throws(SQLiteError) -> SQLiteConnection {
    let connection = try SQLiteConnection(path: path)
    try connection.execute("PRAGMA busy_timeout = 2000")
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
    try connection.execute("PRAGMA journal_mode = WAL")
    try connection.execute("PRAGMA synchronous = NORMAL")
    try connection.execute(Self.layout + "PRAGMA user_version = \(layoutVersion);")
    return connection
  }

  private static func openInMemory() -> SQLiteConnection? {
    let connection = try? SQLiteConnection(path: ":memory:")
    guard (try? connection?.execute(layout)) != nil else { return nil }
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
      throw SQLiteError(
        code: SQLITE_CANTOPEN, message: "no database could be opened, not even in memory")
    }
    return connection
  }

  /// The saved snapshot of `store`, if any.
  func load(store: String) throws(SQLiteError) -> Snapshot? {
    let rows = try open().query(
      "SELECT feature, schema_version, version, state FROM snapshots WHERE store = ?",
      [.text(store)])
    guard let row = rows.first, row.count == 4, let feature = row[0].text,
      let schemaVersion = row[1].integer, let version = row[2].integer, let state = row[3].text
    else { return nil }
    return Snapshot(
      store: store, feature: feature, schemaVersion: Int(schemaVersion),
      version: UInt64(bitPattern: version), state: state)
  }

  /// Writes all `snapshots` in one transaction: after a crash either all of them or none
  /// of them are on disk.
  func save(_ snapshots: [Snapshot]) throws(SQLiteError) {
    guard !snapshots.isEmpty else { return }
    let now = Self.timestamp()
    let connection = try open()
    try connection.execute("BEGIN IMMEDIATE")
    do throws(SQLiteError) {
      for snapshot in snapshots {
        try connection.query(
          """
          INSERT OR REPLACE INTO snapshots (store, feature, schema_version, version, state, saved_at)
          VALUES (?, ?, ?, ?, ?, ?)
          """,
          [
            .text(snapshot.store), .text(snapshot.feature), .integer(Int64(snapshot.schemaVersion)),
            .integer(Int64(bitPattern: snapshot.version)), .text(snapshot.state), .text(now),
          ])
      }
      try connection.execute("COMMIT")
    } catch {
      try? connection.execute("ROLLBACK")
      throw error
    }
  }

  /// Moves the row of `store` into `set_aside` with `reason`, so the store starts fresh while
  /// the old state stays recoverable by hand.
  func setAside(store: String, reason: String) throws(SQLiteError) {
    let connection = try open()
    try connection.execute("BEGIN IMMEDIATE")
    do throws(SQLiteError) {
      try connection.query(
        """
        INSERT INTO set_aside
          SELECT store, feature, schema_version, version, state, saved_at, ?, ? FROM snapshots
          WHERE store = ?
        """, [.text(Self.timestamp()), .text(reason), .text(store)])
      try connection.query("DELETE FROM snapshots WHERE store = ?", [.text(store)])
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
}

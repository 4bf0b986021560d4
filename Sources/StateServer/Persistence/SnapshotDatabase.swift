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
  var connection: SQLiteConnection?
  /// Where the database lives, or `nil` when it is in memory.
  let path: String?
  /// The file could be read but not written: stores are restored, changes are not saved.
  private(set) var isReadOnly = false
  /// Writes compacted snapshots and checkpoints off the state actor (a file database only).
  var background: BackgroundWriter?
  /// Bytes committed since the last checkpoint was asked for.
  var walBytes = 0
  /// The WAL is checkpointed (in the background) once this much was committed to it.
  static let checkpointEvery = 4 << 20

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
  /// It also checks every page, once, in the background: until it has, rows are read and
  /// written as usual; once it found damage, nothing more is written (`write(_:)`).
  private func startBackground(path: String) {
    guard !isReadOnly, let writer = BackgroundWriter(path: path),
      (try? connection?.execute("PRAGMA wal_autocheckpoint = 0")) != nil
    else { return }
    background = writer
    writer.checkIntegrity()
  }

  /// Opens a database file and checks what start-up reads: its header (a file that is not a
  /// database fails here), its layout and its tables. The pages of the stores' rows are checked
  /// in the background (`BackgroundWriter.checkIntegrity()`): `quick_check` reads every page,
  /// which at 1,000,000 notes kept the first answer waiting for half a second or more. A file
  /// that cannot be written is reopened read-only.
  private static func open(path: String, warn: (String) -> Void) throws(SQLiteError)
    -> (SQLiteConnection, readOnly: Bool)
  {
    let connection = try SQLiteConnection(path: path)
    // A commit waits for a compaction's write (see Persistence+Compaction) rather than fail.
    try connection.execute("PRAGMA busy_timeout = 10000")
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

  func open() throws(SQLiteError) -> SQLiteConnection {
    guard let connection else {
      throw SQLiteError(code: SQLITE_CANTOPEN, message: "the state database is closed")
    }
    return connection
  }
}

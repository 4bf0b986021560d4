import CSQLite

/// The database's layout: its tables, made when missing, set aside when not ours.
extension SnapshotDatabase {
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

  /// Creates missing tables; renames aside a table whose columns are not ours (another
  /// program's, or damaged by hand), so one bad table never fails every save.
  static func checkTables(_ connection: SQLiteConnection, warn: (String) -> Void)
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

  static func openInMemory() -> SQLiteConnection? {
    let connection = try? SQLiteConnection(path: ":memory:")
    for table in tables {
      guard (try? connection?.execute(table.create)) != nil else { return nil }
    }
    return connection
  }
}

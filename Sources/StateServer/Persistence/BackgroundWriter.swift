import Dispatch

/// A second connection to the state database, used only on its own serial queue, for the two
/// writes whose cost grows with the whole state: a compacted snapshot, and the WAL checkpoint
/// that copies committed pages into the main file. Both would stall the main actor for tens
/// of milliseconds at 100,000 notes; here they overlap with it.
///
/// SQLite in WAL mode lets a checkpoint run beside the main connection's commits (PASSIVE
/// never waits for them). A snapshot write takes the write lock for its one transaction: a
/// main-actor commit that comes meanwhile waits for it (`busy_timeout`), which is the one
/// O(state) wait left, once per compaction, and only if a commit falls into it.
///
/// `@unchecked Sendable`: `connection` is touched only by blocks on `queue` (and by `close`,
/// which runs on it synchronously), so no two threads ever use it at once.
final class BackgroundWriter: @unchecked Sendable {
  private let queue = DispatchQueue(label: "stateserver.persistence", qos: .utility)
  private var connection: SQLiteConnection?

  /// A connection to `path`, or `nil` when one cannot be opened (the caller then does the
  /// work on its own connection).
  init?(path: String) {
    guard let connection = try? SQLiteConnection(path: path),
      (try? connection.execute("PRAGMA busy_timeout = 10000")) != nil
    else { return nil }
    self.connection = connection
  }

  /// Writes a compacted snapshot unless it is stale, then checkpoints; `done` gets whether
  /// it was written, or the error. Stale means the journal row it covers is gone: only a
  /// newer whole snapshot (or a set-aside) deletes journal rows, and it must not be replaced.
  func write(
    _ write: StoreWrite, done: @escaping @Sendable (Result<Bool, SQLiteError>) -> Void
  ) {
    queue.async { [self] in
      guard let connection, let snapshot = write.snapshot, let covered = write.journalCovered
      else { return done(.success(false)) }
      do throws(SQLiteError) {
        try connection.execute("BEGIN IMMEDIATE")
        let current = try connection.query(
          "SELECT 1 FROM journal WHERE store = ? AND seq = ?",
          [.text(snapshot.store), .integer(covered)])
        guard !current.isEmpty else {
          try connection.execute("ROLLBACK")
          return done(.success(false))
        }
        _ = try SnapshotDatabase.apply(write, on: connection, at: SnapshotDatabase.timestamp())
        try connection.execute("COMMIT")
      } catch {
        try? connection.execute("ROLLBACK")
        return done(.failure(error))
      }
      _ = try? connection.query("PRAGMA wal_checkpoint(PASSIVE)")
      done(.success(true))
    }
  }

  /// Copies committed pages into the main file, beside the main connection's commits.
  func checkpoint() {
    queue.async { [self] in _ = try? connection?.query("PRAGMA wal_checkpoint(PASSIVE)") }
  }

  /// Waits for the queued work, then closes the connection.
  func close() {
    queue.sync { connection = nil }
  }
}

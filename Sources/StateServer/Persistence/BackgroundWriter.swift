import CSQLite
import Dispatch
import Synchronization

/// A second connection to the state database, used only on its own serial queue, for the two
/// writes whose cost grows with the whole state: a compacted snapshot, and the WAL checkpoint
/// that copies committed pages into the main file. Both would stall the state actor for tens
/// of milliseconds at 100,000 notes; here they overlap with it.
///
/// SQLite in WAL mode lets a checkpoint run beside the main connection's commits (PASSIVE
/// never waits for them). A snapshot is written in pieces, each in a short transaction of its
/// own (`SnapshotPieces`): a main-actor commit that comes meanwhile waits for one piece at
/// most (`busy_timeout`), never for the whole state.
///
/// `@unchecked Sendable`: `connection` and `step` are touched only by blocks on `queue` (and
/// by `close` and `setStep`, which run on it synchronously), so no two threads ever use them
/// at once. `interruptible` is the same connection, set once in `init` and read only by
/// `close`, for `interrupt()`, which SQLite lets any thread call on an open connection; it is
/// weak, and the connection is released only by `close` itself, after that call.
final class BackgroundWriter: @unchecked Sendable {
  private let queue = DispatchQueue(label: "stateserver.persistence", qos: .utility)
  private var connection: SQLiteConnection?
  /// Set by `close`: a compaction under way stops before its next piece (shutdown must not
  /// wait for a whole snapshot; what is left is named by no row and cleaned up later).
  private let stopping = Atomic<Bool>(false)

  /// A connection to `path`, or `nil` when one cannot be opened (the caller then does the
  /// work on its own connection).
  init?(path: String) {
    guard let connection = try? SQLiteConnection(path: path),
      (try? connection.execute("PRAGMA busy_timeout = 10000")) != nil
    else { return nil }
    self.connection = connection
    interruptible = connection
  }

  private weak var interruptible: SQLiteConnection?

  /// Writes a compacted snapshot in pieces unless it is stale, then checkpoints; `done` gets
  /// whether it was written, or the error. Stale means the journal row it covers is gone: only
  /// a newer whole snapshot (or a set-aside) deletes journal rows, and it must not be replaced.
  func write(
    _ snapshot: Snapshot, state: [UInt8], covered: Int64, pieceBytes: Int,
    done: @escaping @Sendable (Result<Bool, SQLiteError>) -> Void
  ) {
    queue.async { [self] in
      guard let connection else { return done(.success(false)) }
      let written: Bool
      do throws(SQLiteError) {
        written = try SnapshotPieces.write(
          snapshot, state: state, covered: covered, pieceBytes: pieceBytes, on: connection,
          at: SnapshotDatabase.timestamp(), step: { self.step?($0) },
          shouldStop: { self.stopping.load(ordering: .relaxed) })
      } catch {
        return done(.failure(error))
      }
      _ = try? connection.query("PRAGMA wal_checkpoint(PASSIVE)")
      step?(.finished)
      done(.success(written))
    }
  }

  /// Called on the writer's queue after each step of a compaction in pieces: tests hold it
  /// there. Set through `setStep`, so that it too is touched only on the queue.
  private var step: (@Sendable (SnapshotPieces.Step) -> Void)?

  /// Installs (or removes) the hook called after each step of a compaction.
  func setStep(_ step: (@Sendable (SnapshotPieces.Step) -> Void)?) {
    queue.sync { self.step = step }
  }

  /// What the integrity check found wrong (`quick_check`'s first line), nil while it runs or
  /// when it found nothing.
  var damage: String? { found.withLock { $0 } }
  private let found = Mutex<String?>(nil)
  /// Whether the integrity check is running: only it is interrupted at shutdown (a compaction
  /// stops between its pieces instead).
  private let checking = Atomic<Bool>(false)

  /// Checks every page of the database (`PRAGMA quick_check`), once, on this queue: a read
  /// transaction of its own beside the main connection's, so the state actor answers meanwhile.
  /// Shutdown does not wait for it to finish: `close` interrupts it.
  func checkIntegrity() {
    queue.async { [self] in
      guard let connection, !stopping.load(ordering: .relaxed) else { return }
      checking.store(true, ordering: .sequentiallyConsistent)
      defer { checking.store(false, ordering: .sequentiallyConsistent) }
      // `close` may have missed `checking`: it set `stopping` first, so look again.
      if stopping.load(ordering: .sequentiallyConsistent) { return }
      do throws(SQLiteError) {
        let answer = try connection.query("PRAGMA quick_check").first?.first?.text
        if answer != "ok" { found.withLock { $0 = answer ?? "no answer" } }
      } catch  where error.code & 0xFF == SQLITE_INTERRUPT {
        return
      } catch {
        found.withLock { $0 = error.message }
      }
    }
  }

  /// Returns once the work queued before it has run (tests wait for the integrity check).
  func waitForQueuedWork() {
    queue.sync {}
  }

  /// Copies committed pages into the main file, beside the main connection's commits.
  func checkpoint() {
    queue.async { [self] in _ = try? connection?.query("PRAGMA wal_checkpoint(PASSIVE)") }
  }

  /// Stops a compaction under way before its next piece, waits for the rest of the queued
  /// work, then closes the connection.
  func close() {
    stopping.store(true, ordering: .sequentiallyConsistent)
    if checking.load(ordering: .sequentiallyConsistent) { interruptible?.interrupt() }
    queue.sync { connection = nil }
  }
}

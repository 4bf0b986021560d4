import FoundationEssentials
import JSON
import StateKit

/// Keeps persistent stores on disk, durably: a change is acknowledged only once committed.
///
/// Each store has a snapshot row and a journal of the changes since (the private state's
/// patches, O(change) each); restore is the snapshot with the journal applied. The server
/// records every publication of a persistent store (`record`) and calls `commit` before it
/// hands the lines that report those changes to the writer, so every change reduced in one
/// turn of the state actor shares one transaction (group commit) and no response goes out
/// before the change it reports is on disk. A change made by an effect alone is committed by
/// the same path, or by a commit scheduled for the next turn when nothing else is written.
///
/// SQLite runs in WAL mode with `synchronous = NORMAL`: a committed transaction survives the
/// process being killed; a power loss or OS crash can lose the last transactions committed
/// before it (never a half-written one). A clean exit (`flush`) checkpoints the WAL into the
/// main file and closes the database.
///
/// ```swift
/// let persistence = Persistence(stateDirectory: Persistence.defaultDirectory())
/// let saved = persistence.restore(storeID: "notes", feature: "notes", schemaVersion: 1)
/// let store = try descriptor.makeStore("notes", nil, saved)
/// persistence.attach(store)
/// ```
@StateActor
public final class Persistence {
  let database: SnapshotDatabase
  let warn: @Sendable (String) -> Void
  /// Where the server's life is told (`--log-level info`): how long the final flush took.
  let inform: @Sendable (String) -> Void
  var attached: [String: any AnyStore] = [:]
  var journals: [String: StoreJournal] = [:]
  /// Stores that walk their private state on demand (`JournaledStore.publishesStatePatches`
  /// is false): the commit asks them for what they owe.
  var walksOnDemand: Set<String> = []
  /// Stores with changes awaiting commit, in the order they first changed.
  var dirty: [String] = []
  /// Each feature's schema version by name, and what each store was restored with.
  let schemaVersions: [String: Int]
  var restored: [String: SavedState] = [:]
  var restoredSchemaVersions: [String: Int] = [:]
  /// The large arrays a restore left as text, until the store's decode takes them.
  var restoredText: [String: DeferredArrays] = [:]
  /// Compacted snapshots encoded off the state actor, written by the next commit.
  var compactions: [String: Compaction] = [:]
  /// The last compaction's encoding task (tests await it).
  var lastCompaction: Task<Void, Never>?
  /// The commit scheduled for changes no line reports (an effect's, with nobody subscribed).
  var scheduledCommit: Task<Void, Never>?
  /// Journal bytes below which no store is compacted.
  let compactionMinimum: Int
  /// The size of each piece a compacted snapshot is written in: the longest a commit can wait
  /// for a compaction is the write of one piece.
  var compactionPieceBytes = 256 << 10
  var isClosed = false

  /// How many write transactions have been committed: group commit is visible here.
  public internal(set) var transactionCount = 0

  /// The database file, or `nil` when state is kept in memory (`--ephemeral`, or a state
  /// directory that could not be used).
  public var databasePath: String? { database.path }

  /// Opens (creating if needed) the database in `stateDirectory`; `nil` keeps everything in
  /// memory for this run. Never fails: an unreadable database is set aside with a warning; a
  /// read-only one is read and nothing is written to it, which is said once, here.
  /// `schemaVersions` gives each feature's schema version by feature name; a store is compacted
  /// once its journal passes both its snapshot's size and `compactionMinimum` bytes.
  public init(
    stateDirectory: String?, schemaVersions: [String: Int] = [:],
    compactionMinimum: Int = 256 << 10,
    warn: @escaping @Sendable (String) -> Void = Persistence.writeToStandardError,
    inform: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    database = SnapshotDatabase(directory: stateDirectory, warn: warn)
    self.compactionMinimum = compactionMinimum
    self.inform = inform
    self.schemaVersions = schemaVersions
    self.warn = warn
    if database.isReadOnly {
      warn(
        "the state database \(database.path ?? "") is read-only: stores are restored from it, "
          + "but changes made in this run are kept in memory only and are not saved")
    }
  }

  /// `$XDG_STATE_HOME/APPLICATION`, else `~/.local/state/APPLICATION` (XDG Base Directory):
  /// each application's stores apart from another's.
  public nonisolated static func defaultDirectory(
    application: String = "stateserver",
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String {
    if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
      return FilePath.join(state, application)
    }
    let home =
      environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
      ?? FileManager.default.homeDirectoryForCurrentUser.path
    return FilePath.join(home, ".local/state/" + application)
  }

  /// The default warning sink: a warning record of a default ``Log``.
  public nonisolated static func writeToStandardError(_ message: String) {
    Log().warning(message)
  }
}

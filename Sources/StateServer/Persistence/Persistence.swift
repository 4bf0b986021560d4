import FoundationEssentials
import JSON
import StateKit

/// Keeps persistent stores on disk: restores a store's state and version at start-up, and
/// writes each change to one SQLite database, in a transaction, with bursts coalesced.
///
/// The server's part: `restore` before making a persistent store, `attach` it, call `changed`
/// whenever it publishes, `detach` when it closes, and `flush` at shutdown after effects have
/// drained. A change is on disk `flushDelay` after it happened (longer only when writing is
/// slow: the wait is at least four times the last write's cost, so a store of 100,000 notes
/// edited nonstop spends at most about a fifth of the main actor on persistence), and every
/// change made before `flush` is on disk when `flush` returns, so a clean exit never loses an
/// acknowledged change.
///
/// ```swift
/// let persistence = Persistence(stateDirectory: Persistence.defaultDirectory())
/// let saved = persistence.restore(storeID: "notes", feature: "notes", schemaVersion: 1)
/// let store = try descriptor.makeStore("notes", nil, saved)
/// persistence.attach(store)
/// ```
@MainActor
public final class Persistence {
  private let database: SnapshotDatabase
  private let flushDelay: Duration
  private let clock: any Clock<Duration>
  private let warn: @Sendable (String) -> Void
  private var attached: [String: (store: any AnyStore, schemaVersion: Int)] = [:]
  /// Each feature's schema version by name, and the one each store was restored with: what
  /// `attach(_:)` tags a store's snapshots with.
  private let schemaVersions: [String: Int]
  private var restoredSchemaVersions: [String: Int] = [:]
  /// Stores changed since the last write, in the order they first changed.
  private var dirty: [String] = []
  /// The task that writes the dirty stores once the flush delay has passed (tests await it).
  private(set) var pendingFlush: Task<Void, Never>?
  /// Real time the last write took (encoding and SQLite), to space writes out when they are
  /// expensive.
  private var lastWriteCost = Duration.zero

  /// How many write transactions have been committed: coalescing is visible here.
  public private(set) var transactionCount = 0

  /// The database file, or `nil` when state is kept in memory (`--ephemeral`, or a state
  /// directory that could not be used).
  public var databasePath: String? { database.path }

  /// Opens (creating if needed) the database in `stateDirectory`; `nil` keeps everything in
  /// memory for this run. Never fails: an unreadable database is set aside with a warning.
  /// `schemaVersions` gives each feature's schema version by feature name (from the
  /// registered descriptors), for stores attached without being restored first.
  public init(
    stateDirectory: String?, schemaVersions: [String: Int] = [:],
    flushDelay: Duration = .milliseconds(50),
    clock: any Clock<Duration> = ContinuousClock(),
    warn: @escaping @Sendable (String) -> Void = Persistence.writeToStandardError
  ) {
    database = SnapshotDatabase(directory: stateDirectory, warn: warn)
    self.schemaVersions = schemaVersions
    self.flushDelay = flushDelay
    self.clock = clock
    self.warn = warn
  }

  /// `$XDG_STATE_HOME/stateserver`, else `~/.local/state/stateserver` (XDG Base Directory).
  public nonisolated static func defaultDirectory(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String {
    if let state = environment["XDG_STATE_HOME"], state.hasPrefix("/") {
      return FilePath.join(state, "stateserver")
    }
    let home =
      environment["HOME"].flatMap { $0.isEmpty ? nil : $0 }
      ?? FileManager.default.homeDirectoryForCurrentUser.path
    return FilePath.join(home, ".local/state/stateserver")
  }

  /// The default warning sink: a warning record of a default ``Log`` (text, on stderr through
  /// its queue, so a stderr nobody reads never blocks the caller). The server passes its own
  /// log instead, so `--log-format json` applies to these lines too.
  public nonisolated static func writeToStandardError(_ message: String) {
    Log().warning(message)
  }

  // MARK: Start-up

  /// The saved state and version of `storeID`, or `nil` if there is none or it cannot be used.
  /// A snapshot of another feature, another schema version, or that does not parse is set
  /// aside (kept in the database's `set_aside` table) with a warning.
  public func restore(storeID: String, feature: String, schemaVersion: Int)
    -> (state: JSON, version: UInt64)?
  {
    restoredSchemaVersions[storeID] = schemaVersion
    let snapshot: Snapshot?
    do {
      snapshot = try database.load(store: storeID)
    } catch {
      warn(
        "cannot read the saved state of store \(storeID) (\(error)); starting fresh")
      return nil
    }
    guard let snapshot else { return nil }
    guard snapshot.feature == feature else {
      setAside(storeID: storeID, reason: "saved by feature \(snapshot.feature), not \(feature)")
      return nil
    }
    guard snapshot.schemaVersion == schemaVersion else {
      setAside(
        storeID: storeID,
        reason: "schema version \(snapshot.schemaVersion), expected \(schemaVersion)")
      return nil
    }
    do {
      return (try JSON(parsing: snapshot.state), snapshot.version)
    } catch {
      setAside(storeID: storeID, reason: "state is not valid JSON: \(error)")
      return nil
    }
  }

  /// Moves the saved state of `storeID` aside so the store starts fresh; call it when the
  /// feature cannot decode a restored snapshot. The old state stays in the database.
  public func setAside(storeID: String, reason: String) {
    warn(
      "the saved state of store \(storeID) cannot be used (\(reason)); "
        + "set it aside in \(databasePath ?? "memory") (table set_aside) and starting fresh")
    do {
      try database.setAside(store: storeID, reason: reason)
    } catch {
      warn("could not set aside the state of store \(storeID): \(error)")
    }
  }

  // MARK: Changes

  /// Starts persisting `store`: from now on `changed` schedules a write of its state, tagged
  /// with `schemaVersion` (the feature's).
  public func attach(_ store: any AnyStore, schemaVersion: Int) {
    attached[store.id] = (store, schemaVersion)
  }

  /// Starts persisting `store` with its feature's schema version (from `schemaVersions`,
  /// else the one it was `restore`d with, else 1).
  public func attach(_ store: any AnyStore) {
    let version = schemaVersions[store.featureName] ?? restoredSchemaVersions[store.id] ?? 1
    attach(store, schemaVersion: version)
  }

  /// Records that `storeID` changed; its state is written `flushDelay` later (or four times
  /// the last write's cost, if longer), together with every other store that changed
  /// meanwhile. Unattached stores are ignored.
  public func changed(storeID: String) {
    guard attached[storeID] != nil else { return }
    if !dirty.contains(storeID) { dirty.append(storeID) }
    guard pendingFlush == nil else { return }
    // The deadline is taken now, not when the task first runs, so the write is due
    // `flushDelay` after this change however late the task is scheduled.
    let wait = clock.waiter(after: max(flushDelay, lastWriteCost * 4))
    pendingFlush = Task { [weak self] in
      // A cancelled wait means `flush` already ran: nothing left to do.
      guard (try? await wait()) != nil else { return }
      self?.flush()
    }
  }

  /// Writes the store's last state if it changed, then stops persisting it (`store/close`).
  public func detach(storeID: String) {
    if dirty.contains(storeID) { flush() }
    attached[storeID] = nil
  }

  /// Writes every changed store now, in one transaction. Call at shutdown, after effects
  /// have drained and before exiting.
  public func flush() {
    pendingFlush?.cancel()
    pendingFlush = nil
    guard !dirty.isEmpty else { return }
    let started = ContinuousClock.now
    defer { lastWriteCost = ContinuousClock.now - started }
    var snapshots: [Snapshot] = []
    for id in dirty {
      guard let (store, schemaVersion) = attached[id] else { continue }
      do {
        let state = String(decoding: try store.snapshot.serialized(), as: UTF8.self)
        snapshots.append(
          Snapshot(
            store: id, feature: store.featureName, schemaVersion: schemaVersion,
            version: store.version, state: state))
      } catch {
        warn("cannot encode the state of store \(id) (\(error)); not saved")
      }
    }
    dirty.removeAll()
    do {
      try database.save(snapshots)
      transactionCount += 1
    } catch {
      warn("could not save state (\(error)); the last changes are not on disk")
    }
  }
}

extension Clock where Duration == Swift.Duration {
  /// A wait until `delay` from now: the deadline is fixed when this is called, not when the
  /// returned closure runs.
  fileprivate func waiter(after delay: Duration) -> @Sendable () async throws -> Void {
    let deadline = now.advanced(by: delay)
    return { try await self.sleep(until: deadline, tolerance: nil) }
  }
}

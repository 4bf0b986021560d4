import JSON
import StateKit

/// Where persistent stores keep their snapshots across runs. The server calls it at each point
/// of a store's life; `Persistence/` implements it (SQLite, or memory only for `--ephemeral`).
///
/// A store is persistent when it is the default store of a feature with `isPersistent`, or was
/// opened with `persist: true`.
@MainActor
public protocol StorePersistence: AnyObject {
  /// The saved snapshot of a persistent store about to open, or nil to start fresh.
  func restore(storeID: String, feature: String, schemaVersion: Int) -> (
    state: JSON, version: UInt64
  )?

  /// The restored snapshot did not decode: keep it aside (never delete it) and report why; the
  /// store then starts fresh.
  func setAside(storeID: String, reason: String)

  /// A persistent store opened (restored or new): keep its snapshots from now on.
  func attach(_ store: any AnyStore)

  /// A persistent store published a new version; writes may be coalesced.
  func changed(storeID: String)

  /// A persistent store is closing (`store/close` or shutdown): its last state is saved.
  func detach(storeID: String)

  /// Shutdown, after the drain: everything pending is written before this returns.
  func flush() async
}

import JSON
import StateKit

/// Where persistent stores keep their state across runs. The server calls it at each point
/// of a store's life; `Persistence/` implements it (SQLite, or memory only when no directory
/// can be used).
///
/// A store is persistent when it is the default store of a feature with `isPersistent`, or was
/// opened with `persist: true`. The contract that makes an acknowledgement durable: the server
/// `record`s every publication of a persistent store, and calls `commit` before it hands any
/// line reporting those changes to the writer.
@StateActor
public protocol StorePersistence: AnyObject {
  /// The saved state of a persistent store about to open, or nil to start fresh.
  func restore(storeID: String, feature: String, schemaVersion: Int) -> (
    state: JSON, version: UInt64
  )?

  /// The feature whose data `storeID` holds, if it holds any (a store id is bound to it).
  func savedFeature(of storeID: String) -> String?

  /// The version `storeID`'s saved data is at, read without its state (nil: none saved). What
  /// `restore` gives back unless the data fails its checks.
  func savedVersion(of storeID: String) -> UInt64?

  /// The restored state did not decode: keep it aside (never delete it) and report why; the
  /// store then starts fresh.
  func setAside(storeID: String, reason: String)

  /// A persistent store opened (restored or new): keep its changes from now on.
  func attach(_ store: any AnyStore)

  /// A persistent store published (its `statePatch`, if any, is what changed).
  func record(_ publication: Publication)

  /// Whether `commit` has anything to write.
  var hasPendingChanges: Bool { get }

  /// Writes every recorded change in one transaction, synchronously.
  func commit() throws(CommitFailure)

  /// A persistent store is closing (`store/close` or shutdown): its last changes are committed.
  func detach(storeID: String) throws(CommitFailure)

  /// Shutdown, after the drain: everything pending is written and the storage closed cleanly.
  func flush() async
}

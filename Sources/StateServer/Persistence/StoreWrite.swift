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

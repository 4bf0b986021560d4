import JSON

/// The history side of a store, as the server sees it (`Store` implements it in
/// StoreHistory.swift). A store that does not implement it keeps no history: these defaults
/// say so, which keeps test doubles of `AnyStore` small.
extension AnyStore {
  public func startHistory(limit: Int, sink: (@StateActor (HistoryRecord) -> Void)?) {}
  public var firstHeldVersion: UInt64? { nil }
  public func historyEntries(since: UInt64?, limit: Int) -> [HistoryEntry] { [] }
  public func published(at version: UInt64) throws(HistoryError) -> JSON { throw .off }
  public func pastView(at version: UInt64) throws(HistoryError) -> (any HeldView)? { nil }
  public func rewind(to version: UInt64, cause: JSON?) throws(HistoryError) -> UInt64 {
    throw .off
  }
  public func replay(wire action: JSON, at: Int64) throws(ActionError) -> [JSON] {
    throw .refused(type: "", reason: "store \(id) cannot replay")
  }
}

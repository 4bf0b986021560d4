/// The server's persistence seam, implemented by SQLite snapshots. `flush` is synchronous:
/// when it returns, every change is committed.
extension Persistence: StorePersistence {}

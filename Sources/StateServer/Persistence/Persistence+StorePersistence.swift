/// The server's persistence seam, implemented by SQLite snapshots and journals. `commit` is
/// synchronous: when it returns, every recorded change is committed.
extension Persistence: StorePersistence {}

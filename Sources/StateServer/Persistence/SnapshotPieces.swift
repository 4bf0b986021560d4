/// A compacted snapshot stored in pieces, so that writing one never holds the database's
/// write lock for longer than one piece: a group commit that arrives meanwhile waits for one
/// short transaction at most, not for the whole state.
///
/// The background writer writes the pieces (table `snapshot_pieces`), each in a transaction of
/// its own, then switches them in with one small transaction that points the store's
/// `snapshots` row at them: its `state` becomes the marker `pieces <snapshot> <count> <bytes>`,
/// where `snapshot` is the last journal `seq` the snapshot includes. Restore assembles the
/// pieces and applies only the journal rows after `snapshot`. Afterwards the rows the snapshot
/// covers and the pieces no row names are deleted, a few per transaction.
///
/// A crash at any point loses nothing: before the switch, the old snapshot and its journal
/// are untouched (pieces written so far are named by no row, and deleted by the next
/// compaction's clean-up); after it, the new snapshot plus the rows after it are the same
/// state, whatever the clean-up had deleted. A marker is never valid JSON, so it cannot be
/// mistaken for a state written whole.
struct SnapshotPieces: Equatable {
  /// The last journal `seq` the snapshot includes; it also names its pieces.
  var snapshot: Int64
  var count: Int
  var bytes: Int

  static let prefix = "pieces "

  init(snapshot: Int64, count: Int, bytes: Int) {
    self.snapshot = snapshot
    self.count = count
    self.bytes = bytes
  }

  /// The pieces a `snapshots.state` value names, or `nil` when it holds a state written whole.
  init?(marker: String?) {
    guard let marker, marker.hasPrefix(Self.prefix) else { return nil }
    let fields = marker.dropFirst(Self.prefix.count).split(separator: " ")
    guard fields.count == 3, let snapshot = Int64(fields[0]), let count = Int(fields[1]),
      let bytes = Int(fields[2]), count >= 0, bytes >= 0
    else { return nil }
    self.init(snapshot: snapshot, count: count, bytes: bytes)
  }

  /// The pieces a `snapshots.state` text names, read where it lies: only a short text that
  /// starts as a marker is looked at (a state written whole is never copied for this).
  init?(marker text: UnsafeRawBufferPointer) {
    guard text.count <= 80, text.starts(with: Self.prefix.utf8) else { return nil }
    self.init(marker: String(decoding: text, as: UTF8.self))
  }

  var marker: String { "\(Self.prefix)\(snapshot) \(count) \(bytes)" }

  /// Why pieces could not be assembled.
  struct Unreadable: Error {
    var reason: String
  }

  /// The snapshot's text, or why it cannot be read (pieces missing, out of order, damaged).
  func assemble(store: String, on connection: SQLiteConnection) throws(SQLiteError)
    -> Result<String, Unreadable>
  {
    switch try assembleBytes(store: store, on: connection) {
    case .success(let text):
      guard let state = String(validating: text, as: UTF8.self) else {
        return .failure(Unreadable(reason: "snapshot \(snapshot) is not UTF-8 text"))
      }
      return .success(state)
    case .failure(let reason):
      return .failure(reason)
    }
  }

  /// The snapshot's bytes, or why they cannot be read: each piece is copied once, from where
  /// SQLite holds it into the text (not into a row's array first).
  func assembleBytes(store: String, on connection: SQLiteConnection) throws(SQLiteError)
    -> Result<[UInt8], Unreadable>
  {
    var text: [UInt8] = []
    text.reserveCapacity(bytes)
    return try assemble(store: store, on: connection) { text.append(contentsOf: $0) }
      .map { text }
  }

  /// ``assembleBytes(store:on:)`` into a mapping of their own, which a restore that leaves the
  /// snapshot's large arrays as text keeps.
  func assembleMapped(store: String, on connection: SQLiteConnection) throws(SQLiteError)
    -> Result<MappedBytes, Unreadable>
  {
    guard bytes > 0 else { return .failure(Unreadable(reason: "snapshot \(snapshot) is empty")) }
    let mapped = try MappedBytes(count: bytes)
    guard let base = mapped.bytes.baseAddress else {
      return .failure(Unreadable(reason: "snapshot \(snapshot) could not be mapped"))
    }
    var filled = 0
    return try assemble(store: store, on: connection) { piece in
      // Past the length the marker names, the count check below refuses the pieces.
      let room = max(0, min(piece.count, bytes - filled))
      if room > 0, let from = piece.baseAddress {
        (base + filled).copyMemory(from: from, byteCount: room)
      }
      filled += piece.count
    }.map { mapped }
  }

  /// Hands each piece's bytes to `append` in order, or says why they cannot be read: a piece
  /// missing, out of order, stored as text, or a count or length that is not the marker's.
  private func assemble(
    store: String, on connection: SQLiteConnection,
    _ append: (UnsafeRawBufferPointer) -> Void
  ) throws(SQLiteError) -> Result<Void, Unreadable> {
    var pieces = 0
    var length = 0
    var missing: Int?
    try connection.forEachRow(
      "SELECT piece, bytes FROM snapshot_pieces WHERE store = ? AND snapshot = ? ORDER BY piece",
      [.text(store), .integer(snapshot)]
    ) { row in
      defer { pieces += 1 }
      guard missing == nil else { return }
      guard row.count == 2, row.value(0).integer == Int64(pieces), !row.isText(1),
        let piece = row.bytes(1)
      else {
        missing = pieces
        return
      }
      append(piece)
      length += piece.count
    }
    if let missing {
      return .failure(Unreadable(reason: "piece \(missing) of snapshot \(snapshot) is missing"))
    }
    guard pieces == count, length == bytes else {
      return .failure(
        Unreadable(
          reason: "snapshot \(snapshot) has \(pieces) pieces of \(length) bytes, "
            + "expected \(count) of \(bytes)"))
    }
    return .success(())
  }

  // MARK: Writing (on the background writer's connection)

  /// Where a compaction in pieces stands; a test holds it at any of them (a gate) to show
  /// that commits proceed and that a crash there loses nothing.
  enum Step: Equatable, Sendable {
    /// Piece `n` (from 0) was committed.
    case piece(Int)
    /// The snapshot row now names the pieces.
    case switched
    /// A batch of covered journal rows or unnamed pieces was deleted.
    case cleaned
    /// The compaction is over (written, or found stale and cleaned up).
    case finished
  }

  /// Writes `state` as the snapshot of `snapshot.store` covering the journal up to `covered`,
  /// in pieces of `pieceBytes`; returns `false` (having written nothing that is used) when it
  /// is stale: the journal row it covers is gone, because a newer whole snapshot replaced it;
  /// or when `shouldStop` says so before a piece (shutdown): the old snapshot stays in use.
  static func write(
    _ snapshot: Snapshot, state: [UInt8], covered: Int64, pieceBytes: Int,
    on connection: SQLiteConnection, at now: String, step: (Step) -> Void,
    shouldStop: () -> Bool = { false }
  ) throws(SQLiteError) -> Bool {
    let store = snapshot.store
    let size = max(1, pieceBytes)
    let count = (state.count + size - 1) / size
    for index in 0..<count {
      if shouldStop() { return false }
      let piece = Array(state[(index * size)..<min(state.count, (index + 1) * size)])
      try transaction(on: connection) { () throws(SQLiteError) in
        if index == 0 {
          // Left by an attempt that failed or was cut short: its pieces would be mixed in.
          try connection.query(
            "DELETE FROM snapshot_pieces WHERE store = ? AND snapshot = ?",
            [.text(store), .integer(covered)])
        }
        try connection.query(
          "INSERT INTO snapshot_pieces (store, snapshot, piece, bytes) VALUES (?, ?, ?, ?)",
          [.text(store), .integer(covered), .integer(Int64(index)), .blob(piece)])
      }
      step(.piece(index))
    }
    let pieces = SnapshotPieces(snapshot: covered, count: count, bytes: state.count)
    let switched = try transaction(on: connection) { () throws(SQLiteError) -> Bool in
      let current = try connection.query(
        "SELECT 1 FROM journal WHERE store = ? AND seq = ?", [.text(store), .integer(covered)])
      guard !current.isEmpty else { return false }
      try connection.query(
        """
        INSERT OR REPLACE INTO snapshots (store, feature, schema_version, version, state, saved_at)
        VALUES (?, ?, ?, ?, ?, ?)
        """,
        [
          .text(store), .text(snapshot.feature), .integer(Int64(snapshot.schemaVersion)),
          .integer(Int64(bitPattern: snapshot.version)), .text(pieces.marker), .text(now),
        ])
      return true
    }
    if switched { step(.switched) }
    try cleanUp(store: store, on: connection, step: step)
    return switched
  }

  /// Deletes, a batch per transaction, the journal rows the store's snapshot covers and the
  /// pieces its row does not name (a replaced snapshot's, a stale or interrupted write's).
  static func cleanUp(store: String, on connection: SQLiteConnection, step: (Step) -> Void)
    throws(SQLiteError)
  {
    let row = try connection.query(
      "SELECT substr(state, 1, 80) FROM snapshots WHERE store = ?", [.text(store)]
    ).first
    let named = SnapshotPieces(marker: row?.first?.text)
    let keep = named?.snapshot ?? Int64.min
    if let covered = named?.snapshot {
      while try deleteBatch(
        """
        DELETE FROM journal WHERE seq IN
          (SELECT seq FROM journal WHERE store = ? AND seq <= ? ORDER BY seq LIMIT 256)
        """, [.text(store), .integer(covered)], on: connection)
      {
        step(.cleaned)
      }
    }
    while try deleteBatch(
      """
      DELETE FROM snapshot_pieces WHERE rowid IN
        (SELECT rowid FROM snapshot_pieces WHERE store = ? AND snapshot <> ? LIMIT 4)
      """, [.text(store), .integer(keep)], on: connection)
    {
      step(.cleaned)
    }
  }

  /// One statement in a transaction of its own; whether it deleted anything.
  private static func deleteBatch(
    _ sql: String, _ bindings: [SQLiteValue], on connection: SQLiteConnection
  ) throws(SQLiteError) -> Bool {
    try connection.query(sql, bindings)
    return connection.changes > 0
  }

  private static func transaction<T>(
    on connection: SQLiteConnection, _ body: () throws(SQLiteError) -> T
  ) throws(SQLiteError) -> T {
    try connection.execute("BEGIN IMMEDIATE")
    do throws(SQLiteError) {
      let result = try body()
      try connection.execute("COMMIT")
      return result
    } catch {
      try? connection.execute("ROLLBACK")
      throw error
    }
  }

  /// Inside a set-aside's transaction: a snapshot in pieces is written whole into its row
  /// (so the set-aside row holds the state itself), its pieces and the journal rows it covers
  /// deleted. Pieces that cannot be assembled stay where they are, named by the marker.
  static func assembleForSetAside(store: String, on connection: SQLiteConnection)
    throws(SQLiteError)
  {
    let row = try connection.query(
      "SELECT substr(state, 1, 80) FROM snapshots WHERE store = ?", [.text(store)]
    ).first
    guard let pieces = SnapshotPieces(marker: row?.first?.text),
      case .success(let state) = try pieces.assemble(store: store, on: connection)
    else { return }
    try connection.query(
      "UPDATE snapshots SET state = ? WHERE store = ?", [.text(state), .text(store)])
    try connection.query(
      "DELETE FROM snapshot_pieces WHERE store = ?", [.text(store)])
    try connection.query(
      "DELETE FROM journal WHERE store = ? AND seq <= ?",
      [.text(store), .integer(pieces.snapshot)])
  }
}

import CSQLite

#if canImport(Glibc)
  import Glibc
#endif

/// SQLite's `SQLITE_STATIC` (no destructor: "the bytes stay where they are while bound").
let sqliteStatic: sqlite3_destructor_type? = nil

/// A failed SQLite call: its result code and SQLite's own message.
struct SQLiteError: Error, CustomStringConvertible {
  var code: Int32
  var message: String

  /// The file is not a database, or its pages are damaged: set it aside, do not retry.
  var isUndecodable: Bool {
    let primary = code & 0xFF
    return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT
  }

  var description: String { "SQLite error \(code): \(message)" }
}

/// One open SQLite connection, used from a single thread at a time (persistence lives on the
/// state actor). Just the calls persistence needs: execute, prepare, bind, step, read columns.
final class SQLiteConnection {
  private let handle: OpaquePointer

  /// Opens (creating if needed) the database at `path`; `":memory:"` for a private one.
  /// `readOnly` opens an existing file without ever writing to it.
  init(path: String, readOnly: Bool = false) throws(SQLiteError) {
    var opened: OpaquePointer?
    let flags =
      (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
      | SQLITE_OPEN_NOMUTEX
    let code = sqlite3_open_v2(path, &opened, flags, nil)
    guard code == SQLITE_OK, let opened else {
      let message = opened.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
      sqlite3_close_v2(opened)
      throw SQLiteError(code: code, message: message)
    }
    handle = opened
    sqlite3_extended_result_codes(handle, 1)
  }

  deinit {
    sqlite3_close_v2(handle)
  }

  /// Makes the statement running on this connection stop with `SQLITE_INTERRUPT`: the one call
  /// SQLite lets another thread make, while the connection is open.
  func interrupt() { sqlite3_interrupt(handle) }

  /// Whether the connection cannot write (the file, its directory or its header says so).
  var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

  /// The rowid of the last row inserted on this connection.
  var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

  /// Runs one or more statements that return no rows we need.
  func execute(_ sql: String) throws(SQLiteError) {
    let code = sqlite3_exec(handle, sql, nil, nil, nil)
    guard code == SQLITE_OK else { throw error(code) }
  }

  /// Runs `sql` with `bindings` and returns every row, each column as text or integer.
  @discardableResult
  func query(_ sql: String, _ bindings: [SQLiteValue] = []) throws(SQLiteError) -> [[SQLiteValue]] {
    var rows: [[SQLiteValue]] = []
    try forEachRow(sql, bindings) { row in rows.append(row.values) }
    return rows
  }

  /// Runs `sql` with `bindings` and hands each row to `body` as it is stepped, in SQLite's own
  /// buffers: a large column is read where it lies instead of copied out first.
  func forEachRow(
    _ sql: String, _ bindings: [SQLiteValue] = [],
    _ body: (SQLiteRow) throws(SQLiteError) -> Void
  ) throws(SQLiteError) {
    var statement: OpaquePointer?
    let prepared = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
    guard prepared == SQLITE_OK, let statement else { throw error(prepared) }
    defer { sqlite3_finalize(statement) }
    try bind(bindings, from: 0, to: statement) { () throws(SQLiteError) in
      // The bound bytes are let go after this: SQLite must not hold them past it.
      defer {
        sqlite3_reset(statement)
        sqlite3_clear_bindings(statement)
      }
      while true {
        let code = sqlite3_step(statement)
        if code == SQLITE_DONE { return }
        guard code == SQLITE_ROW else { throw error(code) }
        try body(SQLiteRow(statement: statement))
      }
    }
  }

  /// Binds `bindings[offset...]` to `statement`, then runs `body` while the bytes of every
  /// bound text and blob are alive where they lie: SQLite reads them in place (`SQLITE_STATIC`)
  /// instead of copying them, which for the snapshot of a large state was one more copy of all
  /// of it. Each value's bytes are lent by a closure that `body` runs inside, so they outlive
  /// every step. With the byte count, not -1 (up to the first NUL): an id may contain U+0000,
  /// and "a\0b" and "a\0c" must stay two rows.
  private func bind(
    _ bindings: [SQLiteValue], from offset: Int, to statement: OpaquePointer,
    _ body: () throws(SQLiteError) -> Void
  ) throws(SQLiteError) {
    guard offset < bindings.count else { return try body() }
    let index = Int32(offset + 1)
    func rest() -> Result<Void, SQLiteError> {
      Result { () throws(SQLiteError) in try bind(bindings, from: offset + 1, to: statement, body) }
    }
    let outcome: Result<Void, SQLiteError>
    switch bindings[offset] {
    case .null: outcome = bound(sqlite3_bind_null(statement, index), then: rest)
    case .integer(let i): outcome = bound(sqlite3_bind_int64(statement, index, i), then: rest)
    case .real(let d): outcome = bound(sqlite3_bind_double(statement, index, d), then: rest)
    case .text(let s):
      var text = s
      outcome = text.withUTF8 { bytes in
        let code = bind(statement, index, bytes) { statement, index, base, count in
          sqlite3_bind_text64(
            statement, index, base, sqlite3_uint64(count), sqliteStatic, UInt8(SQLITE_UTF8))
        }
        return bound(code, then: rest)
      }
    case .blob(let b):
      outcome = b.withUnsafeBufferPointer { bytes in
        let code = bind(statement, index, bytes) { statement, index, base, count in
          sqlite3_bind_blob64(statement, index, base, sqlite3_uint64(count), sqliteStatic)
        }
        return bound(code, then: rest)
      }
    }
    try outcome.get()
  }

  /// `then()` when `code` says the value was bound, else the error.
  private func bound(
    _ code: Int32, then: () -> Result<Void, SQLiteError>
  ) -> Result<Void, SQLiteError> {
    code == SQLITE_OK ? then() : .failure(error(code))
  }

  /// The bytes of `column` in row `rowid` of `table` (a text or a blob), read by SQLite's
  /// incremental I/O straight into pages mapped for them, and handed to `body`, which may give
  /// those pages back as it reads them (`madvise`); unmapped after. A large value read as a
  /// column is first assembled by SQLite into a buffer of its own, which the reader cannot give
  /// back: a restore's parse held that whole text beside the tree it built.
  func withBytes<Result>(
    of table: String, column: String, rowid: Int64,
    _ body: (UnsafeMutableRawBufferPointer) -> Result
  ) throws(SQLiteError) -> Result {
    let mapped = try bytes(of: table, column: column, rowid: rowid)
    return body(mapped.bytes)
  }

  /// The value of `column` in row `rowid` of `table`, read into a mapping of its own, which
  /// lives as long as the result (a snapshot whose large arrays are left as text keeps it).
  func bytes(of table: String, column: String, rowid: Int64) throws(SQLiteError) -> MappedBytes {
    var blob: OpaquePointer?
    let opened = sqlite3_blob_open(handle, "main", table, column, rowid, 0, &blob)
    guard opened == SQLITE_OK, let blob else { throw error(opened) }
    defer { sqlite3_blob_close(blob) }
    let count = Int(sqlite3_blob_bytes(blob))
    guard count > 0 else { return MappedBytes(UnsafeMutableRawBufferPointer(start: nil, count: 0)) }
    let bytes = try MappedBytes(count: count)
    let read = sqlite3_blob_read(blob, bytes.bytes.baseAddress, Int32(count), 0)
    guard read == SQLITE_OK else { throw error(read) }
    return bytes
  }

  /// Rows changed by the last statement (a batch of a cleanup knows when it is done).
  var changes: Int { Int(sqlite3_changes(handle)) }

  /// Binds `bytes` through `bind`, with a non-null pointer even when empty (SQLite reads a
  /// null pointer as NULL, and an empty string is not NULL).
  private func bind(
    _ statement: OpaquePointer, _ index: Int32, _ bytes: UnsafeBufferPointer<UInt8>,
    _ bind: (OpaquePointer, Int32, UnsafePointer<CChar>, Int) -> Int32
  ) -> Int32 {
    guard let base = bytes.baseAddress, !bytes.isEmpty else {
      var zero: CChar = 0
      return withUnsafePointer(to: &zero) { bind(statement, index, $0, 0) }
    }
    return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
      bind(statement, index, $0, bytes.count)
    }
  }

  private func error(_ code: Int32) -> SQLiteError {
    SQLiteError(code: code, message: String(cString: sqlite3_errmsg(handle)))
  }
}

/// A bound parameter or a column value.
enum SQLiteValue: Equatable {
  case null
  case integer(Int64)
  case real(Double)
  case text(String)
  /// Bytes stored as they are (a piece of a snapshot may end inside a UTF-8 character).
  case blob([UInt8])

  /// The value as a person reads it in a warning: `1.5`, `'abc'`, `NULL`.
  var description: String {
    switch self {
    case .null: "NULL"
    case .integer(let i): String(i)
    case .real(let d): String(d)
    case .text(let s): "'\(s.count > 40 ? String(s.prefix(40)) + "..." : s)'"
    case .blob(let b): "a blob of \(b.count) bytes"
    }
  }

  var text: String? {
    if case .text(let s) = self { return s }
    return nil
  }

  var integer: Int64? {
    if case .integer(let i) = self { return i }
    return nil
  }
}

/// Bytes in an anonymous mapping of their own, unmapped when this goes.
///
/// Safety of `@unchecked Sendable`: the pointer never changes; the bytes are written only by
/// whoever holds this first, before handing it on (a read from the database, a parse that
/// gives pages back), and unmapped only in `deinit`, when nobody holds it.
final class MappedBytes: @unchecked Sendable {
  let bytes: UnsafeMutableRawBufferPointer

  init(_ bytes: UnsafeMutableRawBufferPointer) { self.bytes = bytes }

  /// `count` new bytes, zero until written.
  convenience init(count: Int) throws(SQLiteError) {
    guard
      let mapped = mmap(nil, count, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
      mapped != MAP_FAILED
    else { throw SQLiteError(code: SQLITE_NOMEM, message: "cannot map \(count) bytes") }
    self.init(UnsafeMutableRawBufferPointer(start: mapped, count: count))
  }

  deinit {
    if let base = bytes.baseAddress { munmap(base, bytes.count) }
  }
}

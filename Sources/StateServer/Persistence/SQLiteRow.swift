import CSQLite

/// One row of a statement being stepped (`SQLiteConnection.forEachRow`), read in SQLite's own
/// buffers: valid only until the row's handler returns.
struct SQLiteRow {
  let statement: OpaquePointer

  var count: Int { Int(sqlite3_column_count(statement)) }

  /// Every column, copied out.
  var values: [SQLiteValue] { (0..<count).map(value) }

  /// Column `column`, copied out: a text as a `String`, a blob as bytes.
  func value(_ column: Int) -> SQLiteValue {
    let index = Int32(column)
    switch sqlite3_column_type(statement, index) {
    case SQLITE_NULL: return .null
    case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, index))
    case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
    case SQLITE_BLOB:
      guard let bytes = bytes(column), !bytes.isEmpty else { return .blob([]) }
      return .blob(Array(bytes.bindMemory(to: UInt8.self)))
    default:
      guard let bytes = bytes(column) else { return .null }
      return .text(String(decoding: bytes, as: UTF8.self))
    }
  }

  /// Whether column `column` holds text (asked before reading it: a read may convert it).
  func isText(_ column: Int) -> Bool {
    sqlite3_column_type(statement, Int32(column)) == SQLITE_TEXT
  }

  /// The bytes of text or blob column `column` where SQLite holds them, without a copy (the
  /// state of a large store is parsed where it lies); `nil` for a number or NULL. Valid until
  /// the row's handler returns.
  func bytes(_ column: Int) -> UnsafeRawBufferPointer? {
    let index = Int32(column)
    let start: UnsafeRawPointer?
    // The pointer first, then the count: asking the count first may convert the value.
    switch sqlite3_column_type(statement, index) {
    case SQLITE_TEXT: start = sqlite3_column_text(statement, index).map(UnsafeRawPointer.init)
    case SQLITE_BLOB: start = sqlite3_column_blob(statement, index)
    default: return nil
    }
    let count = Int(sqlite3_column_bytes(statement, index))
    guard let start, count > 0 else { return UnsafeRawBufferPointer(start: nil, count: 0) }
    return UnsafeRawBufferPointer(start: start, count: count)
  }
}

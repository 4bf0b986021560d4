/// Where in the feature's code something was written: a `.run` or `.emit` effect, a `send`.
/// Diagnostics name it (`Timers.swift:42`), and `TestStore` records its failures there, so a
/// programming error points at its source rather than at the runtime.
public struct CallSite: Sendable, Hashable, CustomStringConvertible {
  /// `Module/File.swift`, as `#fileID` gives it.
  public var fileID: String
  /// The full path, as `#filePath` gives it.
  public var filePath: String
  public var line: Int
  public var column: Int

  /// A call site; use the defaults in a parameter list to capture the caller's.
  public init(
    fileID: String = #fileID, filePath: String = #filePath, line: Int = #line,
    column: Int = #column
  ) {
    self.fileID = fileID
    self.filePath = filePath
    self.line = line
    self.column = column
  }

  /// `Module/File.swift:42`.
  public var description: String { "\(fileID):\(line)" }
}

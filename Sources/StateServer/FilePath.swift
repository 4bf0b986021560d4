import FoundationEssentials

/// The path operations the server needs on `/`-separated strings, as `NSString` did them
/// (`appendingPathComponent`, `deletingLastPathComponent`), without linking Foundation.
enum FilePath {
  /// `base` and `component` joined by one `/`.
  static func join(_ base: String, _ component: String) -> String {
    if base.isEmpty { return component }
    var base = Substring(base)
    while base.count > 1, base.hasSuffix("/") { base = base.dropLast() }
    let component = component.drop { $0 == "/" }
    return base == "/" ? "/" + component : base + "/" + component
  }

  /// `path` without its last component (`/a/b` -> `/a`, `b` -> ``, `/a` -> `/`).
  static func directory(of path: String) -> String {
    var path = Substring(path)
    while path.count > 1, path.hasSuffix("/") { path = path.dropLast() }
    guard let slash = path.lastIndex(of: "/") else { return "" }
    if slash == path.startIndex { return "/" }
    var directory = path[..<slash]
    while directory.count > 1, directory.hasSuffix("/") { directory = directory.dropLast() }
    return String(directory)
  }

  /// The directory for temporary files: `$TMPDIR`, else `/tmp`.
  static var temporaryDirectory: String {
    ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
  }
}

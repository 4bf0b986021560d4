import Foundation

/// Where the shared conformance data lives: `$STATESERVER_TESTDATA`, else
/// `<repo root>/../shared/testdata` (a clean clone with `shared/` beside it, as on CI).
enum TestData {
  static let root: URL = {
    if let path = ProcessInfo.processInfo.environment["STATESERVER_TESTDATA"], !path.isEmpty {
      return URL(fileURLWithPath: path, isDirectory: true)
    }
    let repository = URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent()  // JSONTests
      .deletingLastPathComponent()  // Tests
      .deletingLastPathComponent()  // repository root
    return repository.appendingPathComponent("../shared/testdata", isDirectory: true)
      .standardizedFileURL
  }()

  static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

  static func folder(_ relativePath: String) -> URL {
    root.appendingPathComponent(relativePath, isDirectory: true)
  }

  static func exists(_ relativePath: String) -> Bool {
    var isDirectory: ObjCBool = false
    return FileManager.default.fileExists(
      atPath: folder(relativePath).path, isDirectory: &isDirectory)
      && isDirectory.boolValue
  }

  /// Whether tests over `relativePath` should run: when the data is there, and always on CI
  /// (`CI=true`), where missing data must fail the run instead of skipping it.
  static func shouldRun(_ relativePath: String) -> Bool {
    if exists(relativePath) { return true }
    if isCI { return true }
    FileHandle.standardError.write(
      Data(
        "note: skipping tests over \(folder(relativePath).path): not found (set STATESERVER_TESTDATA; on CI this fails)\n"
          .utf8))
    return false
  }

  /// The sorted file names in `relativePath`, or `[]` when it is missing.
  static func fileNames(in relativePath: String) -> [String] {
    let names =
      (try? FileManager.default.contentsOfDirectory(atPath: folder(relativePath).path)) ?? []
    return names.sorted()
  }

  static func bytes(_ relativePath: String, _ name: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: folder(relativePath).appendingPathComponent(name)))
  }
}

import Foundation
import Testing

@testable import StateServer

/// The page check (`PRAGMA quick_check`) runs in the background after the database opens, not
/// before the first answer; damage it finds stops every later write, so the file is never
/// written over.
@Suite struct IntegrityCheckTests {
  @Test func damageFoundInTheBackgroundStopsWritesButNotTheOpen() throws {
    let directory = temporaryStateDirectory()
    defer { remove(directory) }
    do {
      let database = SnapshotDatabase(directory: directory, warn: { _ in })
      for version in 1...400 {
        try database.write([
          StoreWrite(
            store: "notes", journal: [(UInt64(version), String(repeating: "x", count: 500))])
        ])
      }
      try database.checkpointAndClose()
    }
    // The journal grew last: its last page is a leaf of its table, which only a check of every
    // page reads. Filled with 0xFF, it is no b-tree page at all.
    let path = directory + "/" + SnapshotDatabase.fileName
    let file = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    let size = try file.seekToEnd()
    try file.seek(toOffset: size - 4096)
    try file.write(contentsOf: Data(repeating: 0xFF, count: 4096))
    try file.close()

    var warnings: [String] = []
    let database = SnapshotDatabase(directory: directory, warn: { warnings.append($0) })
    // Opened as it is (the header, the layout and the tables are sound): not set aside.
    #expect(warnings.isEmpty)
    #expect(database.path == path)
    let background = try #require(database.background)
    background.waitForQueuedWork()
    let damage = try #require(background.damage)
    #expect(!damage.isEmpty)
    let write = [StoreWrite(store: "notes", journal: [(401, "{}")])]
    #expect {
      try database.write(write)
    } throws: { error in
      (error as? SQLiteError)?.message.contains("failed its integrity check") == true
    }
    #expect(FileManager.default.fileExists(atPath: path))
  }
}

// `json-tool diff`: reads NDJSON lines `[old, new]` on stdin and writes, for each, the patch
// `JSONPatch.diff(from: old, to: new)` in wire form as one line on stdout. This is how
// tests/test_patch_jsonpatch.py checks our patches with Python's `jsonpatch`.
//
// A line that is not a two-element array gets `null` (so output lines stay aligned with input
// lines) and a message on stderr; the exit status is then 1.
import Foundation
import JSON

enum DiffCommand {
  static func run(_ arguments: [String]) -> Int32 {
    guard arguments.isEmpty else {
      FileHandle.standardError.write(Data("usage: json-tool diff < pairs.ndjson\n".utf8))
      return 2
    }
    let input = FileHandle.standardInput.readDataToEndOfFile()
    var output: [UInt8] = []
    var failures = 0
    var lineNumber = 0
    for line in input.split(separator: 0x0A, omittingEmptySubsequences: false) {
      lineNumber += 1
      if line.isEmpty { continue }
      do {
        let pair = try JSON(parsing: [UInt8](line))
        guard case .array(let documents) = pair, documents.count == 2 else {
          throw Malformed(reason: "expected [old, new], got \(pair.kindDescription)")
        }
        let patch = JSONPatch.diff(from: documents[0], to: documents[1])
        try patch.json.write(to: &output)
      } catch {
        failures += 1
        FileHandle.standardError.write(Data("json-tool diff: line \(lineNumber): \(error)\n".utf8))
        output.append(contentsOf: Array("null".utf8))
      }
      output.append(0x0A)
    }
    FileHandle.standardOutput.write(Data(output))
    return failures == 0 ? 0 : 1
  }

  struct Malformed: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
  }
}

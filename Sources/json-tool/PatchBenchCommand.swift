// `json-tool bench-patch PAIR.ndjson [--rounds N]`: the Swift side of bench/patch/run.sh.
// PAIR.ndjson holds two lines, the old and the new document (written by bench/patch/bench.py,
// which times Python's `jsonpatch` on the very same pair).
//
// Times, best of N rounds each:
// - `diff_shared`: `JSONPatch.diff` where the new document shares storage with the old one
//   except along the changed element, as a store's successive states do (the new document is
//   the old one with the changed element assigned from the parsed new document);
// - `diff_parsed`: `JSONPatch.diff` of the two documents as parsed, sharing nothing (every
//   element is compared by value);
// - `apply`: `apply(to:)` of the resulting patch to a uniquely owned document, in place.
// Prints one JSON object on stdout: seconds per operation, the patch, and checks.
// `--profile shared|parsed` runs only that diff's rounds and prints nothing (for `perf`).
import Foundation
import JSON

enum PatchBenchCommand {
  static func run(_ arguments: [String]) -> Int32 {
    var rounds = 20
    var profiled: String?
    var path: String?
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      if argument == "--rounds", let value = rest.popFirst().flatMap({ Int($0) }), value > 0 {
        rounds = value
      } else if argument == "--profile", let which = rest.popFirst(),
        which == "shared" || which == "parsed"
      {
        profiled = which
      } else if path == nil {
        path = argument
      } else {
        return usage()
      }
    }
    guard let path, let data = FileManager.default.contents(atPath: path) else { return usage() }
    let lines = data.split(separator: 0x0A)
    guard lines.count == 2,
      let old = try? JSON(parsing: [UInt8](lines[0])),
      let parsedNew = try? JSON(parsing: [UInt8](lines[1]))
    else {
      FileHandle.standardError.write(Data("bench-patch: \(path) must hold two JSON lines\n".utf8))
      return 1
    }
    guard let shared = sharingNew(old: old, new: parsedNew) else {
      FileHandle.standardError.write(
        Data("bench-patch: expected {\"items\": [...]} documents of equal length\n".utf8))
      return 1
    }

    let clock = ContinuousClock()
    func best(_ body: () -> Void) -> Double {
      var fastest = Double.infinity
      for _ in 0..<rounds {
        let start = clock.now
        body()
        fastest = min(fastest, Double((clock.now - start) / .nanoseconds(1)) / 1e9)
      }
      return fastest
    }

    var patch = JSONPatch()
    var parsedPatch = JSONPatch()
    switch profiled {
    case "shared":
      _ = best { patch = JSONPatch.diff(from: old, to: shared) }
      return 0
    case "parsed":
      _ = best { parsedPatch = JSONPatch.diff(from: old, to: parsedNew) }
      return 0
    default: break
    }
    let diffShared = best { patch = JSONPatch.diff(from: old, to: shared) }
    let diffParsed = best { parsedPatch = JSONPatch.diff(from: old, to: parsedNew) }

    // Apply to a document nobody else holds, as the store does: a deep enough copy that only
    // this variable references its `items` buffer.
    var document = rebuilt(old)
    var applyFailed = false
    let apply = best {
      do { try patch.apply(to: &document) } catch { applyFailed = true }
    }
    let correct = !applyFailed && document == parsedNew && parsedPatch == patch

    var report = JSONObject()
    report.set("elements", .integer(Int64(old["items"]?.arrayValue?.count ?? 0)))
    report.set("rounds", .integer(Int64(rounds)))
    report.set("diff_shared_seconds", .double(diffShared))
    report.set("diff_parsed_seconds", .double(diffParsed))
    report.set("apply_seconds", .double(apply))
    report.set("patch", patch.json)
    report.set("correct", .bool(correct))
    guard let bytes = try? JSON.object(report).serialized() else { return 1 }
    FileHandle.standardOutput.write(Data(bytes + [0x0A]))
    return correct ? 0 : 1
  }

  /// `old` with every element of `items` that differs replaced by the one from `new`: equal to
  /// `new`, sharing every other buffer with `old`.
  static func sharingNew(old: JSON, new: JSON) -> JSON? {
    guard let oldItems = old["items"]?.arrayValue, let newItems = new["items"]?.arrayValue,
      oldItems.count == newItems.count
    else { return nil }
    var items = oldItems
    for index in items.indices where items[index] != newItems[index] {
      items[index] = newItems[index]
    }
    var document = old
    document["items"] = .array(items)
    return document
  }

  /// A copy of `value` that shares no array or object buffer with it.
  static func rebuilt(_ value: JSON) -> JSON {
    switch value {
    case .array(let elements): return .array(elements.map(rebuilt))
    case .object(let object): return .object(JSONObject(object.members.map { ($0, rebuilt($1)) }))
    default: return value
    }
  }

  static func usage() -> Int32 {
    FileHandle.standardError.write(
      Data("usage: json-tool bench-patch PAIR.ndjson [--rounds N] [--profile shared|parsed]\n".utf8)
    )
    return 2
  }
}

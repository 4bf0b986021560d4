import FoundationEssentials
import JSON
import StateKit

/// `stateserver replay FILE`: rebuilds each recorded store from its recorded start, feeds it
/// the recorded actions in order at their recorded times with no effect run (what effects
/// sent back is recorded as actions too), and compares every patch with the recorded one.
///
/// Prints one JSON line on stdout: `{"replay": "match", "entries", "stores", "application"}`
/// (the recording's application, `{"name", "version"}`, or null for a recording older than
/// that field) and exit status 0 when every patch matches; at the first divergence
/// `{"replay": "diverged", "store", "version", "line", "action", "expected", "actual",
/// "reason"}`, the same in words on stderr, and status 1. A file that is not a recording of
/// this application's features (malformed, another application's name, or another
/// fingerprint) is refused on stderr with status 2. Another version of the same application
/// is replayed when the fingerprints match, with a note on stderr (``RecordedApplication``).
@StateActor
public enum Replay {
  /// Replays the recording at `path` against `features` of the application `name` at
  /// `version` (what `Server.main` was given); prints the outcome and returns the exit status.
  public static func run(
    path: String, features: [FeatureDescriptor], name: String = "stateserver",
    version: String = Server.version
  ) -> Int32 {
    let outcome: Outcome
    do {
      outcome = try replay(
        path: path, features: features,
        application: RecordedApplication(name: name, version: version),
        note: { writeStandardError("\(name) replay: \(path): \($0)\n") })
    } catch {
      writeStandardError("\(name) replay: \(path): \(error.message)\n")
      return 2
    }
    switch outcome {
    case .matched(let entries, let stores, let recorded):
      writeStandardOutput([
        "replay": "match", "entries": .integer(Int64(entries)), "stores": .integer(Int64(stores)),
        "application": recorded?.json ?? .null,
      ])
      return 0
    case .diverged(let divergence):
      writeStandardOutput(.object(divergence.json))
      writeStandardError("\(name) replay: \(path): \(divergence.text)\n")
      return 1
    }
  }

  enum Outcome {
    case matched(entries: Int, stores: Int, application: RecordedApplication?)
    case diverged(Divergence)
  }

  /// Where the rebuilt store first differs from the recording.
  struct Divergence {
    var store: String
    var version: Int64
    var line: Int
    var action: JSON
    var expected: [JSON]
    var actual: [JSON]?
    var reason: String

    var json: JSONObject {
      [
        "replay": "diverged", "store": .string(store), "version": .integer(version),
        "line": .integer(Int64(line)), "action": action, "expected": .array(expected),
        "actual": actual.map(JSON.array) ?? .null, "reason": .string(reason),
      ]
    }

    var text: String {
      var text = "store '\(store)' diverges at version \(version) (line \(line)): \(reason)\n"
      text += "  action:   \(action)\n"
      text += "  expected: \(JSON.array(expected))\n"
      text += "  actual:   \(actual.map { JSON.array($0).description } ?? "none")"
      return text
    }
  }

  /// The last publication of each store, as its observer saw it.
  private final class Latest {
    var publications: [String: Publication] = [:]
  }

  /// Why a file cannot be replayed at all.
  struct Refusal: Error {
    var message: String
    init(_ message: String) { self.message = message }
  }

  /// `application` is the one replaying; `note` receives what the user should know but does
  /// not stop the replay (another version of the same application).
  static func replay(
    path: String, features: [FeatureDescriptor], application: RecordedApplication,
    note: (String) -> Void = { _ in }
  ) throws(Refusal) -> Outcome {
    let lines = try readLines(path)
    guard !lines.isEmpty else { throw Refusal("the file is empty; expected a recording header") }
    let byName = Dictionary(features.map { ($0.name, $0) }) { first, _ in first }
    var stores: [String: any AnyStore] = [:]
    let latest = Latest()
    var entries = 0
    var opened = 0
    // A recorded skip names its entry by seq; the replayed store makes no entry for recorded
    // events, so its seqs differ: the target is found by the version its action made.
    var actionVersions: [String: [Int64: UInt64]] = [:]
    var historyLimit = 1000
    var recorded: RecordedApplication?
    for (index, text) in lines.enumerated() {
      let number = index + 1
      let line: JSON
      do {
        line = try JSON(parsing: text)
      } catch {
        throw Refusal("line \(number) is not JSON: \(error)")
      }
      let type = line["type"]?.stringValue
      if number == 1 && type != "header" {
        throw Refusal("line 1 is not a recording header (expected {\"type\": \"header\", ...})")
      }
      switch type {
      case "header":
        recorded = RecordedApplication(header: line)
        try checkApplication(recorded, number: number, replaying: application, note: note)
        try checkHeader(line, number: number, features: features)
        historyLimit = Int(line["history"]?.integerValue ?? 1000)
        for store in stores.values { store.close() }
        stores = [:]
      case "open":
        let (id, feature) = (try field(line, "store", number), try field(line, "feature", number))
        guard let descriptor = byName[feature] else {
          throw Refusal("line \(number): no feature '\(feature)' in this server")
        }
        guard let state = line["state"], let version = line["version"]?.integerValue, version >= 0
        else { throw Refusal("line \(number): an open line needs a state and a version") }
        stores[id]?.close()
        let store: any AnyStore
        do {
          store = try descriptor.makeStore(id, nil, (state, UInt64(version)))
        } catch {
          throw Refusal("line \(number): the recorded state of '\(id)' does not decode: \(error)")
        }
        store.startHistory(limit: max(1, historyLimit), sink: nil)
        store.observer = { latest.publications[$0.store] = $0 }
        stores[id] = store
        opened += 1
        if store.version != UInt64(version) {
          return .diverged(
            Divergence(
              store: id, version: version, line: number, action: .null, expected: [],
              actual: nil,
              reason: "the store opens at version \(store.version), recorded \(version)"))
        }
      case "entry":
        let id = try field(line, "store", number)
        guard let store = stores[id] else {
          throw Refusal("line \(number): store '\(id)' has no open line before it")
        }
        guard let expected = line["patch"]?.arrayValue,
          let version = line["version"]?.integerValue,
          let at = line["at"].flatMap(HistoryWire.milliseconds)
        else { throw Refusal("line \(number): an entry needs a patch, a version and an at") }
        latest.publications[id] = nil
        let kind = line["kind"]?.stringValue
        switch kind {
        case "action":
          guard let action = line["action"], action != .null else {
            throw Refusal("line \(number): an action entry without its action")
          }
          if let seq = line["seq"]?.integerValue {
            actionVersions[id, default: [:]][seq] = UInt64(version)
          }
          do {
            _ = try store.replay(wire: action, at: at)
          } catch {
            return .diverged(
              Divergence(
                store: id, version: version, line: number, action: action, expected: expected,
                actual: nil, reason: "the action no longer decodes: \(error)"))
          }
        case "rewind":
          guard let to = line["to"]?.integerValue, to >= 0 else {
            throw Refusal("line \(number): a rewind entry needs `to`")
          }
          do {
            _ = try store.rewind(to: UInt64(to), cause: nil)
          } catch {
            return .diverged(
              Divergence(
                store: id, version: version, line: number, action: .null, expected: expected,
                actual: nil, reason: "the rewind to version \(to) cannot be replayed: \(error)"))
          }
        case "skip":
          guard let seq = line["entry"]?.integerValue, let skipped = line["skipped"]?.boolValue,
            let target = actionVersions[id]?[seq]
          else {
            throw Refusal(
              "line \(number): a skip entry needs the `entry` of an action before it and `skipped`")
          }
          do {
            guard let branching = store as? any BranchingStore else { throw SkipError.off }
            _ = try branching.skip(entryAt: target, skipped: skipped, cause: nil)
          } catch {
            return .diverged(
              Divergence(
                store: id, version: version, line: number, action: .null, expected: expected,
                actual: nil, reason: "the skip of entry \(seq) cannot be replayed: \(error)"))
          }
        case "events":
          continue
        default:
          throw Refusal("line \(number): unknown entry kind \(line["kind"] ?? .null)")
        }
        entries += 1
        let actual = latest.publications[id]?.patch ?? []
        if !JSON.array(actual).equalsByValue(.array(expected)) || store.version != UInt64(version) {
          return .diverged(
            Divergence(
              store: id, version: version, line: number, action: line["action"] ?? .null,
              expected: expected, actual: actual,
              reason: store.version == UInt64(version)
                ? "the patch differs"
                : "the rebuilt store is at version \(store.version), recorded \(version)"))
        }
      case "effect":
        continue
      case "close":
        let id = try field(line, "store", number)
        stores.removeValue(forKey: id)?.close()
      default:
        throw Refusal("line \(number): unknown line type \(line["type"] ?? .null)")
      }
    }
    for store in stores.values { store.close() }
    return .matched(entries: entries, stores: opened, application: recorded)
  }

  /// Refuses another application's recording; notes another version of this one. A recording
  /// that names no application (made before headers named it) is left to the fingerprint.
  private static func checkApplication(
    _ recorded: RecordedApplication?, number: Int, replaying ours: RecordedApplication,
    note: (String) -> Void
  ) throws(Refusal) {
    guard let recorded, recorded != ours else { return }
    guard recorded.name == ours.name else {
      throw Refusal(
        "line \(number): recorded by the application \(recorded.description), not by "
          + "\(ours.name); replay it with `\(recorded.name) replay FILE`")
    }
    note(
      "recorded by \(recorded.description), replayed by \(ours.description); the features' "
        + "fingerprints decide whether it can be")
  }

  private static func checkHeader(_ line: JSON, number: Int, features: [FeatureDescriptor])
    throws(Refusal)
  {
    guard line["format"]?.stringValue == Fingerprint.format else {
      throw Refusal(
        "line \(number): not a stateserver recording (no \"format\": \"\(Fingerprint.format)\")")
    }
    let ours = Fingerprint.features(features)
    guard line["fingerprint"]?.stringValue != Fingerprint.combined(ours) else { return }
    let theirs = line["features"]?.objectValue
    var differences: [String] = []
    for (name, fingerprint) in ours where theirs?[name]?.stringValue != fingerprint {
      differences.append(theirs?[name] == nil ? "\(name) (not recorded)" : name)
    }
    if let theirs {
      for (name, _) in theirs.members where !ours.contains(where: { $0.name == name }) {
        differences.append("\(name) (not in this server)")
      }
    }
    let recorded =
      RecordedApplication(header: line)?.description
      ?? "server \(line["server"]?.stringValue ?? "?")"
    throw Refusal(
      "recorded with other features (\(recorded), fingerprint "
        + "\(line["fingerprint"]?.stringValue ?? "none")); schemas differ for: "
        + (differences.isEmpty ? "the set as a whole" : differences.joined(separator: ", ")))
  }

  private static func field(_ line: JSON, _ key: String, _ number: Int) throws(Refusal) -> String {
    guard let value = line[key]?.stringValue else {
      throw Refusal("line \(number): missing \"\(key)\" (a string)")
    }
    return value
  }

  private static func readLines(_ path: String) throws(Refusal) -> [String] {
    guard let data = FileManager.default.contents(atPath: path) else {
      throw Refusal("cannot read the file")
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw Refusal("the file is not UTF-8 text")
    }
    return text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
  }

  private static func writeStandardOutput(_ line: JSON) {
    let bytes = ((try? line.serialized()) ?? []) + [UInt8(ascii: "\n")]
    StandardStream.writeAll(bytes, to: 1)
  }

  private static func writeStandardError(_ text: String) {
    StandardStream.writeAll(text, to: 2)
  }
}

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

  /// The last publication of each store, as its observer saw it.
  private final class Latest {
    var publications: [String: Publication] = [:]
  }

  /// Why a file cannot be replayed at all.
  typealias Refusal = RecordingRefusal

  /// `application` is the one replaying; `note` receives what the user should know but does
  /// not stop the replay (another version of the same application).
  static func replay(
    path: String, features: [FeatureDescriptor], application: RecordedApplication,
    note: (String) -> Void = { _ in }
  ) throws(Refusal) -> Outcome {
    let lines = try RecordingReader.lines(path: path)
    let byName = Dictionary(features.map { ($0.name, $0) }) { first, _ in first }
    var stores: [String: any AnyStore] = [:]
    // A feature that reads another store (`Shared`) reads the replayed one, as it stands at
    // this point of the recording: the recording interleaves every store's entries in the order
    // they were reduced, so each read finds the state the recorded reduce found.
    for feature in features {
      for dependency in feature.dependencies { dependency.bind { stores[$0] } }
    }
    let latest = Latest()
    var entries = 0
    var opened = 0
    // A recorded skip names its entry by seq; the replayed store makes no entry for recorded
    // events, so its seqs differ: the target is found by the version its action made.
    var actionVersions: [String: [Int64: UInt64]] = [:]
    var historyLimit = 1000
    var recorded: RecordedApplication?
    for read in lines {
      let (number, line, type) = (read.number, read.json, read.type)
      switch type {
      case "header":
        recorded = RecordedApplication(header: line)
        try checkApplication(recorded, number: number, replaying: application, note: note)
        try checkHeader(line, number: number, features: features)
        historyLimit = Int(line["history"]?.integerValue ?? 1000)
        for store in stores.values { store.close() }
        stores = [:]
      case "open":
        let (id, feature) = (
          try RecordingReader.field(read, "store"), try RecordingReader.field(read, "feature")
        )
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
        store.observer = { [weak store] publication in
          // Compared with the recorded patch, which holds every value: a held one is encoded
          // (`HeldValue`), not kept past the state's next change.
          var kept = publication
          if let held = store?.heldValues, !held.isEmpty {
            kept.patch = (try? publication.filled(with: held)) ?? publication.patch
          }
          latest.publications[publication.store] = kept
        }
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
        let id = try RecordingReader.field(read, "store")
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
        let id = try RecordingReader.field(read, "store")
        stores.removeValue(forKey: id)?.close()
      default:
        throw Refusal("line \(number): unknown line type \(line["type"] ?? .null)")
      }
    }
    for store in stores.values { store.close() }
    return .matched(entries: entries, stores: opened, application: recorded)
  }

  private static func writeStandardOutput(_ line: JSON) {
    let bytes = ((try? line.serialized()) ?? []) + [UInt8(ascii: "\n")]
    StandardStream.writeAll(bytes, to: 1)
  }

  private static func writeStandardError(_ text: String) {
    StandardStream.writeAll(text, to: 2)
  }
}

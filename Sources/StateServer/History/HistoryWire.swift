import FoundationEssentials
import JSON
import StateKit

/// The wire form of history: what `history/get` answers and `--record` writes, and back.
enum HistoryWire {
  /// An entry as an object: `seq`, `kind` (`action`, `events`, `rewind` with `to`, `skip` with
  /// `entry` and `skipped`), `version`,
  /// `action` (its wire form, or null), `origin`, `patch`, `events`, `at` (ISO 8601 with
  /// milliseconds, the exact stamp the reducer saw), `durationUs` and `effects`.
  static func entry(_ entry: HistoryEntry, withEffects: Bool = true) -> JSONObject {
    var object: JSONObject = ["seq": .integer(Int64(entry.seq))]
    switch entry.kind {
    case .action: object["kind"] = "action"
    case .events: object["kind"] = "events"
    case .rewind(let to):
      object["kind"] = "rewind"
      object["to"] = .integer(Int64(to))
    case .skip(let seq, let skipped):
      object["kind"] = "skip"
      object["entry"] = .integer(Int64(seq))
      object["skipped"] = .bool(skipped)
    }
    object["version"] = .integer(Int64(entry.version))
    object["action"] = entry.action() ?? .null
    object["origin"] = origin(entry.origin)
    object["patch"] = .array(entry.patch)
    object["events"] = .array(entry.events)
    object["at"] = timestamp(entry.at)
    object["durationUs"] = .integer(microseconds(entry.duration))
    if entry.kind == .action { object["skipped"] = .bool(entry.skipped) }
    if withEffects { object["effects"] = .array(entry.effects.map { .object(effect($0)) }) }
    return object
  }

  /// `{request}` for a client's action, `{request, action}` for one an effect sent (`action`
  /// is the `seq` of the action whose effect sent it), `{}` for one the server sent itself.
  /// An attached client's request (its cause is tagged `{"client": n, "id": id}`, since ids are
  /// each client's own) is `{request: id, client: n}`: `request` stays a JSON-RPC id.
  static func origin(_ origin: HistoryEntry.Origin) -> JSON {
    var object = JSONObject()
    if case .object(let tagged)? = origin.request, case .integer(let client)? = tagged["client"],
      let id = tagged["id"]
    {
      object["request"] = id
      object["client"] = .integer(client)
    } else if let request = origin.request {
      object["request"] = request
    }
    if let action = origin.action { object["action"] = .integer(Int64(action)) }
    return .object(object)
  }

  static func effect(_ life: EffectLife) -> JSONObject {
    [
      "effect": .integer(Int64(life.effect)), "kind": .string(life.kind),
      "action": life.action.map { .integer(Int64($0)) } ?? .null,
      "status": .string(life.status.rawValue), "startedAt": timestamp(life.startedAt),
      "durationUs": .integer(microseconds(life.duration)),
    ]
  }

  static func timestamp(_ milliseconds: Int64) -> JSON {
    (try? JSONValueEncoder().encode(ReduceTime.date(milliseconds))) ?? .null
  }

  /// The stamp back from `at`, exact to the millisecond.
  static func milliseconds(_ timestamp: JSON) -> Int64? {
    guard let date = try? JSONValueDecoder().decode(Date.self, from: timestamp) else { return nil }
    let value = (date.timeIntervalSince1970 * 1000).rounded()
    guard value.isFinite, abs(value) < 1e15 else { return nil }
    return Int64(value)
  }

  static func microseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds &* 1_000_000 &+ attoseconds / 1_000_000_000_000
  }
}

import JSON

/// The requests a recording's entries were made by, rebuilt in order, with the lines each one is
/// answered with.
extension ReplayEmitter {
  /// The recording's history bound (the server's `--history` in the test) and its steps.
  static func steps(path: String) throws(Refusal) -> (history: Int64, steps: [Step]) {
    var script = Script()
    for line in try RecordingReader.lines(path: path) {
      switch line.type {
      case "header":
        script.history = line.json["history"]?.integerValue ?? 1000
      case "open":
        guard let store = line.json["store"]?.stringValue,
          let version = line.json["version"]?.integerValue
        else { throw Refusal("line \(line.number): an open line needs a store and a version") }
        script.versions[store] = version
      case "entry":
        try script.add(line)
      default:
        continue
      }
    }
    return (script.history, script.steps)
  }

  /// The steps so far and what the next entry is read against.
  struct Script {
    var history: Int64 = 1000
    var versions: [String: Int64] = [:]
    var steps: [Step] = []
    /// The recording's clock at its first entry, the test's time 0: a recording made in real
    /// time starts some milliseconds after the server did, and the test need not wait for them.
    var base: Int64?
    /// The test's virtual time: milliseconds of the recording's clock since `base`.
    var now: Int64 = 0
    /// The `clock/advance` step the lines of an effect's entry at `now` join, when the last step
    /// is one; a dispatch after it closes it.
    var advance: Int?
    var advances = 0

    mutating func add(_ line: RecordingReader.Line) throws(Refusal) {
      let (entry, number) = (line.json, line.number)
      guard let store = entry["store"]?.stringValue, let version = entry["version"]?.integerValue,
        let patch = entry["patch"]?.arrayValue
      else { throw Refusal("line \(number): an entry needs a store, a version and a patch") }
      let from = versions[store] ?? 0
      versions[store] = version
      let kind = entry["kind"]?.stringValue
      guard kind == "action" || kind == "events" else {
        throw Refusal(
          "line \(number): a \(kind ?? "kindless") entry cannot be emitted: the history request "
            + "that made it is not recorded; --emit reproduces dispatches and effects")
      }
      let origin = entry["origin"]
      guard origin?["client"] == nil else {
        throw Refusal(
          "line \(number): the action on '\(store)' was sent by an attached client, whose "
            + "requests are not this client's; --emit reproduces one client's session")
      }
      let request = origin?["request"]
      var lines: [JSON] = []
      if !patch.isEmpty {
        lines.append(
          PatchNotice(
            store: store, path: "", from: UInt64(max(0, from)), to: UInt64(version),
            operations: patch, cause: request
          ).json)
      }
      for event in entry["events"]?.arrayValue ?? [] {
        lines.append([
          "jsonrpc": "2.0", "method": "store/event",
          "params": ["store": .string(store), "event": event],
        ])
      }
      var clock: Int64?
      if let reading = entry["clockMs"]?.integerValue {
        let origin = base ?? reading
        base = origin
        clock = reading - origin
      }
      if kind == "action", let id = request, origin?["action"] == nil, let action = entry["action"]
      {
        // A client's dispatch: sent once the clock reads what it read when it was reduced.
        if let clock, clock > now { advance(to: clock) }
        advance = nil
        lines.append([
          "jsonrpc": "2.0", "id": id,
          "result": ["store": .string(store), "version": .integer(version)],
        ])
        steps.append(
          Step(
            request: [
              "jsonrpc": "2.0", "id": id, "method": "dispatch",
              "params": ["store": .string(store), "action": action],
            ], expected: lines))
        return
      }
      // An effect's action or events (or the server's own): made while the clock moved.
      guard let clock else {
        throw Refusal(
          "line \(number): an effect's \(kind == "events" ? "events" : "action") on '\(store)' "
            + "carries no clockMs (the recording was made before entries read the server's "
            + "clock), so when it happened cannot be known: its `at` is wall time, which a "
            + "recording on the virtual clock does not move; record the session again")
      }
      guard clock >= now else {
        throw Refusal(
          "line \(number): the server's clock went back (\(clock) ms after \(now) ms: it became "
            + "virtual at initialize after the session began), so the effect's time is unknown")
      }
      if clock > now || advance == nil { advance(to: clock) }
      if let open = advance {
        steps[open].expected.insert(contentsOf: lines, at: steps[open].expected.count - 1)
      }
    }

    /// Appends a `clock/advance` to `time` (by 0 ms when it is `now`: effects due then still
    /// run before the answer, so their lines come before it).
    private mutating func advance(to time: Int64) {
      advances += 1
      let id: JSON = .string("clock/advance \(advances)")
      steps.append(
        Step(
          request: [
            "jsonrpc": "2.0", "id": id, "method": "clock/advance",
            "params": ["ms": .integer(time - now)],
          ],
          expected: [
            ["jsonrpc": "2.0", "id": id, "result": ["clock": "virtual", "now": .integer(time)]]
          ]))
      now = time
      advance = steps.count - 1
    }
  }
}

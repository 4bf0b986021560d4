import JSON
import StateKit

/// `history/get`, `state/get` with a `version`, `store/rewind`, and what every store's history
/// reports (the debug log, the recording).
extension Connection {
  /// The most entries one `history/get` returns.
  static let historyPageLimit = 1000

  /// Starts the history of a store just attached (`--history`, `--record`) and records its
  /// opening.
  func startHistory(of store: any AnyStore) {
    recorder?.opened(store)
    let log = self.log
    let recorder = self.recorder
    let logsActions = log.level >= .debug
    guard options.historyLimit > 0 || recorder != nil || logsActions else { return }
    guard recorder != nil || logsActions else {
      store.startHistory(limit: options.historyLimit, sink: nil)
      return
    }
    store.startHistory(limit: options.historyLimit) { @StateActor record in
      recorder?.append(record)
      if logsActions, case .entry(let entry) = record { Self.logReduced(entry, log) }
    }
  }

  /// `--log-level debug`: one line per reduced action.
  private static func logReduced(_ entry: HistoryEntry, _ log: Log) {
    guard entry.kind == .action else { return }
    var origin = "server"
    if let action = entry.origin.action {
      origin = "action \(action)"
    } else if let request = entry.origin.request {
      origin = "request \(request)"
    }
    log.debug(
      "reduced",
      [
        "store": entry.store, "type": entry.action().flatMap(WireFormat.typeName) ?? "?",
        "origin": origin, "version": String(entry.version),
        "durationUs": String(HistoryWire.microseconds(entry.duration)),
      ])
  }

  func getHistory(_ params: Params) throws(RPCError) -> Outcome {
    let storeID = try params.string("store", "the id of an open store")
    let since = try params.optionalVersion("since")
    let limit = try params.optionalVersion("limit").map { Int(min($0, UInt64(Int.max))) }
    guard let store = registry.store(storeID) else { throw .unknownStore(storeID) }
    guard let first = store.firstHeldVersion else { throw .historyOff(storeID) }
    let entries = store.historyEntries(
      since: since, limit: min(limit ?? Self.historyPageLimit, Self.historyPageLimit))
    return .result([
      "store": .string(storeID), "first": .integer(Int64(first)),
      "version": .integer(Int64(store.version)),
      "entries": .array(entries.map { .object(HistoryWire.entry($0)) }),
    ])
  }

  /// `state/get {store, version, path?}`: the published state as it was at `version`.
  func getStateAt(_ params: StateAtParams) throws(RPCError) -> Outcome {
    guard let version = params.version else { return try getState(params.current) }
    let storeID = params.store
    let path = params.path.orRoot
    guard let store = registry.store(storeID) else { throw .unknownStore(storeID) }
    let head: JSONObject = ["store": .string(storeID), "version": .integer(Int64(version))]
    let missing = RPCError.invalidParams(
      pointer: "/path",
      reason:
        "the state of '\(storeID)' had no value at '\(path.description)' at version \(version)")
    // A view that leaves a large array's elements to the state is held apart and written as
    // text, never walked back as a tree of every element (`Store.pastView(at:)`).
    let past: (any HeldView)?
    do {
      past = try store.pastView(at: version)
    } catch {
      throw .versionUnavailable(error, store: storeID, asked: version)
    }
    if let past {
      if path.isRoot {
        return writtenResult(
          head, barriers: [], writingState: past.write,
          else: (try? store.published(at: version)) ?? .null)
      }
      guard let value = past.value(at: path) else { throw missing }
      var result = head
      result["state"] = value
      return .result(.object(result))
    }
    let state: JSON
    do {
      state = try store.published(at: version)
    } catch {
      throw .versionUnavailable(error, store: storeID, asked: version)
    }
    guard let value = path.value(in: state) else { throw missing }
    var result = head
    result["state"] = value
    return .result(.object(result))
  }

  /// `store/rewind {store, version}`: the state at `version` becomes current as a new version.
  func rewindStore(_ params: Params, id: JSON?) throws(RPCError) -> Outcome {
    let storeID = try params.string("store", "the id of an open store")
    guard let version = try params.optionalVersion("version") else {
      throw .invalidParams(
        pointer: "/version", reason: "missing; expected the version to go back to")
    }
    guard let store = registry.store(storeID) else { throw .unknownStore(storeID) }
    do {
      // Tagged like a dispatch's cause: request ids are each client's own (Connection+Attached).
      let now = try store.rewind(to: version, cause: storeCause(id))
      return .dispatched(store: storeID, version: now)
    } catch {
      throw .versionUnavailable(error, store: storeID, asked: version)
    }
  }
}

extension Params {
  /// A non-negative integer member (a version, a count), nil when absent.
  func optionalVersion(_ key: String) throws(RPCError) -> UInt64? {
    guard let value = object[key] else { return nil }
    guard case .integer(let number) = value, number >= 0 else {
      throw .invalidParams(
        pointer: "/\(key)", reason: "expected a non-negative integer, got \(value.kindDescription)")
    }
    return UInt64(number)
  }
}

extension RPCError {
  /// A past version history cannot produce: `data.oldest` is the oldest one it can.
  static func versionUnavailable(_ error: HistoryError, store: String, asked: UInt64) -> RPCError {
    switch error {
    case .off:
      return historyOff(store)
    case .evicted(let oldest):
      return RPCError(
        code: invalidParamsCode, message: "Invalid params",
        data: [
          "pointer": "/version", "oldest": .integer(Int64(oldest)),
          "reason": .string(
            "version \(asked) of '\(store)' is no longer in its history; the oldest held is \(oldest)"
          ),
        ])
    case .future(let current):
      return RPCError(
        code: invalidParamsCode, message: "Invalid params",
        data: [
          "pointer": "/version", "current": .integer(Int64(current)),
          "reason": .string("'\(store)' is at version \(current); version \(asked) is ahead of it"),
        ])
    }
  }

  static func historyOff(_ store: String) -> RPCError {
    RPCError(
      code: invalidParamsCode, message: "Invalid params",
      data: [
        "pointer": "/store",
        "reason": .string("'\(store)' keeps no history; start the server with --history N (N > 0)"),
      ])
  }
}

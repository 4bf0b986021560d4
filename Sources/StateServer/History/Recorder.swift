import Dispatch
import JSON
import StateKit
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `--record FILE`: appends every store's history to FILE as NDJSON, off the state actor.
///
/// Lines: a `header` (format, the application's name and version as given to `Server.main`,
/// the stateserver library's version, the features' schema fingerprints, the history bound),
/// then per store an `open` (its private state and version), an `entry` per reduced
/// action, rewind or effect-emitted events, an `effect` per effect start and end, and a
/// `close`. An entry carries `clockMs`, the server's clock when it was made (``ServerClock``:
/// virtual time under `--clock virtual`, else real time since the server started), which is
/// how `replay --emit` knows how far to move a test's virtual clock before an effect's action. `stateserver replay FILE` reads them back (``Replay``).
///
/// The state actor only queues values: the entry's action, patch and events are encoded and
/// written on a serial queue. At most `capacity` lines wait; past that the state actor waits
/// for the writer (a recording that silently dropped lines could not be replayed).
final class Recorder: Sendable {
  private let fd: Int32
  private let queue = DispatchQueue(label: "stateserver.recorder")
  private let room: DispatchSemaphore
  private let log: Log
  private let clock: ServerClock
  /// Lines encoded but not yet written, and how many lines are queued behind them: the queue
  /// writes when it runs dry (or past 64 KiB), one `write(2)` per batch rather than per line.
  private let pending = Mutex<[UInt8]>([])
  private let queued = Atomic<Int>(0)

  /// Opens (creates, or appends to) `path` and queues the header; nil with a message when the
  /// file cannot be opened.
  static func start(
    path: String, application: RecordedApplication, features: [FeatureDescriptor],
    historyLimit: Int, clock: ServerClock, log: Log
  ) -> Result<Recorder, RPCError> {
    let fd = Glibc.open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      let reason = String(cString: strerror(errno))
      return .failure(.internalError("cannot open the recording '\(path)': \(reason)"))
    }
    let recorder = Recorder(fd: fd, capacity: 65_536, clock: clock, log: log)
    recorder.write {
      let fingerprints = Fingerprint.features(features)
      return [
        "type": "header", "format": .string(Fingerprint.format), "formatVersion": 1,
        "application": application.json, "server": .string(Server.version),
        "fingerprint": .string(Fingerprint.combined(fingerprints)),
        "features": .object(JSONObject(fingerprints.map { ($0.name, .string($0.fingerprint)) })),
        "history": .integer(Int64(historyLimit)),
      ]
    }
    return .success(recorder)
  }

  private init(fd: Int32, capacity: Int, clock: ServerClock, log: Log) {
    self.fd = fd
    self.clock = clock
    self.log = log
    self.room = DispatchSemaphore(value: capacity)
  }

  /// A store opened (or was restored): its private state, from which replay starts.
  @StateActor
  func opened(_ store: any AnyStore) {
    let line: JSON = [
      "type": "open", "store": .string(store.id), "feature": .string(store.featureName),
      "version": .integer(Int64(store.version)), "state": store.snapshot,
    ]
    write { line }
  }

  @StateActor
  func closed(_ storeID: String) {
    write { ["type": "close", "store": .string(storeID)] }
  }

  func append(_ record: HistoryRecord) {
    switch record {
    case .entry(let entry):
      // Read now, as the entry is made: the writer's queue runs later.
      let offset = clock.now.offset.components
      let clockMs = offset.seconds * 1000 + offset.attoseconds / 1_000_000_000_000_000
      write {
        var object: JSONObject = ["type": "entry", "store": .string(entry.store)]
        for (key, value) in HistoryWire.entry(entry, withEffects: false).members {
          object[key] = value
        }
        object["clockMs"] = .integer(clockMs)
        return .object(object)
      }
    case .effect(let store, let life):
      write {
        var object: JSONObject = ["type": "effect", "store": .string(store)]
        for (key, value) in HistoryWire.effect(life).members { object[key] = value }
        return .object(object)
      }
    }
  }

  /// Waits until every queued line is written, then closes the file.
  func finish() {
    queue.sync {
      pending.withLock { buffer in
        Self.writeAll(fd, buffer, log)
        buffer.removeAll()
      }
      _ = Glibc.close(fd)
    }
  }

  private func write(_ line: @escaping @Sendable () -> JSON) {
    room.wait()
    queued.add(1, ordering: .relaxed)
    queue.async { [self] in
      let bytes = (try? line().serialized()) ?? []
      let left = queued.subtract(1, ordering: .relaxed).newValue
      pending.withLock { buffer in
        if !bytes.isEmpty {
          buffer += bytes
          buffer.append(UInt8(ascii: "\n"))
        }
        if left == 0 || buffer.count >= 1 << 16 {
          Self.writeAll(fd, buffer, log)
          buffer.removeAll(keepingCapacity: true)
        }
      }
      room.signal()
    }
  }

  private static func writeAll(_ fd: Int32, _ bytes: [UInt8], _ log: Log) {
    bytes.withUnsafeBytes { buffer in
      var offset = 0
      while offset < buffer.count {
        let written = Glibc.write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          log.error("the recording cannot be written", ["reason": String(cString: strerror(errno))])
          return
        }
        offset += written
      }
    }
  }
}

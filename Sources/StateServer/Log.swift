import JSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Diagnostics on stderr (stdout carries protocol messages only), as text or as one JSON
/// object per line.
///
/// Records are queued whole to ``StandardErrorWriter``, whose thread alone writes them: they
/// never interleave mid-line, and a stderr nobody reads never blocks the caller (past a bound,
/// records are dropped and counted). ``flush(timeout:)`` before exiting.
///
/// ```swift
/// log.warning("notification failed", ["method": "dispatch", "code": "-32003"])
/// // text: stateserver: warning: notification failed method=dispatch code=-32003
/// ```
public struct Log: Sendable {
  /// How much to say: each level includes those before it.
  public enum Level: Int, Sendable, Comparable, CaseIterable {
    case error, warning, info, debug

    /// The level as `--log-level` spells it.
    public var name: String {
      switch self {
      case .error: "error"
      case .warning: "warning"
      case .info: "info"
      case .debug: "debug"
      }
    }

    public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
  }

  /// `text`: `stateserver: level: message key=value`; `json`: one object per line.
  public enum Format: String, Sendable, CaseIterable {
    case text, json
  }

  /// Records above this level are dropped.
  public var level: Level
  public var format: Format

  /// A log writing `level` and below in `format`.
  public init(level: Level = .warning, format: Format = .text) {
    self.level = level
    self.format = format
  }

  /// Something failed that a person should look at.
  public func error(
    _ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]
  ) {
    record(.error, message, fields)
  }

  /// Something was refused or degraded (a failed notification, a cancelled effect).
  public func warning(
    _ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]
  ) {
    record(.warning, message, fields)
  }

  /// The server's life: shutdown, signals.
  public func info(
    _ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]
  ) {
    record(.info, message, fields)
  }

  /// Detail for debugging.
  public func debug(
    _ message: @autoclosure () -> String, _ fields: KeyValuePairs<String, String> = [:]
  ) {
    record(.debug, message, fields)
  }

  private func record(
    _ level: Level, _ message: () -> String, _ fields: KeyValuePairs<String, String>
  ) {
    guard level <= self.level else { return }
    var line: [UInt8]
    switch format {
    case .text:
      var text = "stateserver: \(level.name): \(message())"
      for (key, value) in fields { text += " \(key)=\(value)" }
      line = Array(text.utf8)
    case .json:
      var object: JSONObject = ["level": .string(level.name), "message": .string(message())]
      for (key, value) in fields { object[key] = .string(value) }
      line = (try? JSON.object(object).serialized()) ?? Array("{}".utf8)
    }
    line.append(UInt8(ascii: "\n"))
    StandardErrorWriter.shared.enqueue(line, format: format)
  }

  /// Waits, at most `timeout` seconds, until every queued record is written.
  @discardableResult
  public static func flush(timeout: Double = 0.5) -> Bool {
    StandardErrorWriter.shared.flush(timeout: timeout)
  }

  /// The record that stands for `count` records dropped while stderr was full.
  static func droppedNotice(count: Int, format: Format) -> [UInt8] {
    let message = "\(count) log records dropped: stderr is not being read"
    let line =
      switch format {
      case .text: "stateserver: warning: \(message)\n"
      case .json: #"{"level":"warning","message":"\#(message)","dropped":"\#(count)"}"# + "\n"
      }
    return Array(line.utf8)
  }

  /// Writes to fd 2 at once (the line before serving starts): Glibc's `stderr` global is not
  /// concurrency-safe in Swift 6.
  static func writeStandardError(_ bytes: [UInt8]) {
    writeAll(bytes, to: 2)
  }

  /// Writes all of `bytes` to `fd`, retrying on EINTR; gives up on any other error.
  static func writeAll(_ bytes: [UInt8], to fd: Int32) {
    bytes.withUnsafeBytes { raw in
      guard let base = raw.baseAddress else { return }
      var offset = 0
      while offset < raw.count {
        let written = write(fd, base + offset, raw.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          return  // nowhere left to report a failing stderr
        }
        offset += written
      }
    }
  }
}

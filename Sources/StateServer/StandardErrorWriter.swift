import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Log lines on their way to stderr, written by a thread of their own.
///
/// A parent that never reads our stderr (a GUI, a test harness with a forgotten pipe) fills the
/// pipe after ~64 KiB; a log call that wrote synchronously would then block the state actor and
/// the whole protocol with it. Here a log call only queues its line: at most `limit` bytes wait
/// (counting the batch being written); past that, lines are dropped and counted, and a notice
/// of how many were dropped takes their place once there is room again.
final class StandardErrorWriter: @unchecked Sendable {
  // Safety: every mutable property is read and written only with `condition` locked; callers
  // on any thread meet the writing thread nowhere else.

  /// The process's stderr.
  static let shared = StandardErrorWriter(fd: 2, limit: 256 << 10)

  private let condition = Condition()
  private let fd: Int32
  private let limit: Int
  private var lines: [[UInt8]] = []
  /// Bytes queued or being written.
  private var bytes = 0
  private var dropped = 0
  private var droppedFormat = Log.Format.text
  private var writing = false
  private var started = false

  init(fd: Int32, limit: Int) {
    self.fd = fd
    self.limit = limit
  }

  /// Queues one whole line (with its newline); never blocks on the descriptor.
  func enqueue(_ line: [UInt8], format: Log.Format) {
    condition.lock()
    defer { condition.unlock() }
    if !started {
      started = true
      let thread = OSThread(name: "stateserver.stderr") { [self] in run() }
      thread.start()
    }
    if dropped > 0 {
      let notice = Log.droppedNotice(count: dropped, format: droppedFormat)
      guard bytes + notice.count + line.count <= limit else {
        dropped += 1
        return
      }
      append(notice)
      dropped = 0
    }
    guard bytes + line.count <= limit else {
      dropped += 1
      droppedFormat = format
      return
    }
    append(line)
  }

  /// Waits until everything queued is written (the drop notice included), at most `timeout`
  /// seconds: a stderr nobody reads must not hold up the exit. Returns whether it all went out.
  @discardableResult
  func flush(timeout: TimeInterval) -> Bool {
    condition.lock()
    defer { condition.unlock() }
    guard started else { return true }
    if dropped > 0 {
      append(Log.droppedNotice(count: dropped, format: droppedFormat))
      dropped = 0
    }
    let deadline = Date(timeIntervalSinceNow: timeout)
    while !lines.isEmpty || writing {
      if !condition.wait(until: deadline) { return false }
    }
    return true
  }

  private func append(_ line: [UInt8]) {
    lines.append(line)
    bytes += line.count
    condition.broadcast()
  }

  private func run() {
    var buffer: [UInt8] = []
    while true {
      condition.lock()
      while lines.isEmpty { condition.wait() }
      let batch = lines
      lines = []
      writing = true
      condition.unlock()
      buffer.removeAll(keepingCapacity: true)
      for line in batch { buffer += line }
      Log.writeAll(buffer, to: fd)
      condition.lock()
      bytes -= buffer.count
      writing = false
      condition.broadcast()
      condition.unlock()
    }
  }
}

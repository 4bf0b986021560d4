import FoundationEssentials
import JSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The one owner of stdout: a thread that takes everything queued, encodes it into one buffer
/// and writes it with as few `write(2)` calls as the pipe allows.
///
/// It writes whenever lines are committed; the main actor commits once per input batch, so a
/// lone request is answered at once and a flood of requests is answered in large writes. The
/// buffer is written out whenever it passes ``chunkBytes``, and a batch's array of responses is
/// encoded element by element: a response line of gigabytes (1,000 `state/get` of a 4 MB state
/// in one batch) costs one chunk and one element of memory, not the whole line.
final class StdoutWriter: Sendable {
  private let fd: Int32
  private let queue: OutputQueue
  private let log: Log
  /// Called once with `errno` when writing fails (the client closed its end): the owner's
  /// connection begins its shutdown, an attached client's going away is no error of the server's.
  private let onBroken: @Sendable (Int32) -> Void
  static let chunkBytes = 256 << 10
  /// The pipe's capacity when stdout is a pipe (0 otherwise): a direct write must fit in it.
  private let pipeCapacity: Int

  /// `onBroken` is called once, from the thread that wrote, when the output is closed or fails;
  /// by default it logs an error.
  init(
    fd: Int32, queue: OutputQueue, log: Log, onBroken: (@Sendable (Int32) -> Void)? = nil
  ) {
    self.fd = fd
    self.queue = queue
    self.log = log
    self.onBroken =
      onBroken ?? { code in
        log.error("stdout failed; the remaining output is discarded", ["errno": String(code)])
      }
    var status = stat()
    if fstat(fd, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO {
      pipeCapacity = Int(max(fcntl(fd, 1032 /* F_GETPIPE_SZ, Linux only */), 0))
    } else {
      pipeCapacity = 0
    }
  }

  /// Writes a small commit from the caller's thread when nothing else is queued or being
  /// written and the pipe has room for all of it (so `write(2)` cannot block); returns false
  /// when the lines must go through the queue instead.
  ///
  /// The pipe's fill is asked (`FIONREAD`) only when the bound the queue keeps
  /// (``OutputQueue/beginDirectWrite()``) does not prove room: for a client that keeps up, once
  /// per pipe's worth of output instead of a system call per request.
  func writeDirectly(_ lines: [Outgoing]) -> Bool {
    guard pipeCapacity > 0, let unreadAtMost = queue.beginDirectWrite() else { return false }
    var bytes = JSONWriter()
    for line in lines { encode(line, into: &bytes) }
    var measured: Int? = nil
    if unreadAtMost > pipeCapacity - bytes.count {
      var unread: Int32 = 0
      guard ioctl(fd, UInt(FIONREAD), &unread) == 0, bytes.count <= pipeCapacity - Int(unread)
      else {
        queue.endDirectWrite(written: 0, broken: false)
        return false
      }
      measured = Int(unread)
    }
    let (written, failure) = writeAll(bytes)
    let broken = written < bytes.count
    queue.endDirectWrite(written: written, broken: broken, unread: measured)
    if broken { onBroken(failure) }
    return true
  }

  func start() {
    let thread = OSThread(name: "stateserver.stdout") { [self] in run() }
    thread.start()
  }

  /// The bytes encoded and not yet written, and the estimated output they stand for. One
  /// buffer for the thread's life: every line is encoded straight into it.
  private struct Pending: ~Copyable {
    var bytes = JSONWriter(capacity: 1 << 20)
    var estimate = 0
    var broken = false
  }

  private func run() {
    var pending = Pending()
    while case (var lines, let sizes)? = queue.next() {
      guard !pending.broken else {
        // The client is gone: keep consuming so nothing waits on us.
        queue.release(sizes.reduce(0, +), written: 0)
        continue
      }
      // Each line is moved out of the batch (a placeholder without references left behind), so
      // the writer owns it: reading it in the array copied it (retaining each of its members)
      // only to release the copy once written, and the array's release again afterwards.
      for index in lines.indices {
        let size = sizes[index]
        let line = exchange(&lines[index], with: .written)
        if size > Self.chunkBytes, case .message(.array(let elements), _) = line {
          stream(elements, estimate: size, into: &pending)
        } else {
          encode(line, into: &pending.bytes)
          pending.estimate += size
          if pending.bytes.count >= Self.chunkBytes { flush(&pending) }
        }
      }
      flush(&pending)
      if pending.bytes.capacity > 16 << 20 { pending.bytes = JSONWriter(capacity: 1 << 20) }
    }
  }

  /// A batch's responses as one line, written out chunk by chunk as it is encoded.
  private func stream(_ elements: [JSON], estimate: Int, into pending: inout Pending) {
    var left = estimate
    pending.bytes.append(UInt8(ascii: "["))
    for (index, element) in elements.enumerated() {
      if index > 0 { pending.bytes.append(UInt8(ascii: ",")) }
      let start = pending.bytes.count
      do {
        try pending.bytes.write(element)
      } catch {
        encodeFailure(of: element["id"], error, into: &pending.bytes)
        if pending.bytes.count > start {
          // its newline: this is an element, not a line
          pending.bytes.truncate(to: pending.bytes.count - 1)
        } else {
          pending.bytes.append("null")
        }
      }
      if pending.bytes.count >= Self.chunkBytes {
        let share = min(left, pending.bytes.count)
        left -= share
        pending.estimate += share
        flush(&pending)
      }
    }
    pending.bytes.append("]\n")
    pending.estimate += left
  }

  private func flush(_ pending: inout Pending) {
    var written = 0
    if !pending.broken && pending.bytes.count > 0 {
      let failure: Int32
      (written, failure) = writeAll(pending.bytes)
      if written < pending.bytes.count {
        pending.broken = true
        queue.markBroken()
        onBroken(failure)
      }
    }
    queue.release(pending.estimate, written: written)
    pending.estimate = 0
    pending.bytes.truncate(to: 0)
  }

  private func encode(_ line: Outgoing, into bytes: inout JSONWriter) {
    do {
      try line.write(to: &bytes)
    } catch {
      encodeFailure(of: line.responseID, error, into: &bytes)
    }
  }

  /// A value JSON cannot express (a NaN in a state): a response still gets an answer.
  private func encodeFailure(of id: JSON?, _ error: JSONWriteError, into bytes: inout JSONWriter) {
    log.error("cannot encode an outgoing message", ["reason": error.description])
    guard let id else { return }
    let reason = "the result cannot be written as JSON: \(error.reason)"
    try? Outgoing.failure(id: id, error: .internalError(reason)).write(to: &bytes)
  }

  /// Returns how many bytes were written (all of them unless the output is closed or broken)
  /// and, when not all, the `errno` of the failure.
  private func writeAll(_ bytes: borrowing JSONWriter) -> (written: Int, errno: Int32) {
    bytes.withUnsafeBytes { raw in
      guard let base = raw.baseAddress else { return (0, 0) }
      var offset = 0
      while offset < raw.count {
        let written = write(fd, base + offset, raw.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          if errno == EAGAIN {
            var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            _ = poll(&poller, 1, -1)
            continue
          }
          return (offset, errno)
        }
        offset += written
      }
      return (offset, 0)
    }
  }
}

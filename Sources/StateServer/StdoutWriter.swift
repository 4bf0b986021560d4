import Foundation
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
/// lone request is answered at once and a flood of requests is answered in large writes.
final class StdoutWriter: Sendable {
  private let fd: Int32
  private let queue: OutputQueue
  private let log: Log
  /// Called instead of the error log when writing fails: an attached client that goes away is
  /// no error of the server's.
  private let onBroken: (@Sendable (Int32) -> Void)?

  init(fd: Int32, queue: OutputQueue, log: Log, onBroken: (@Sendable (Int32) -> Void)? = nil) {
    self.fd = fd
    self.queue = queue
    self.log = log
    self.onBroken = onBroken
  }

  func start() {
    let thread = Thread { [self] in run() }
    thread.name = "stateserver.stdout"
    thread.start()
  }

  private func run() {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(1 << 20)
    var broken = false
    while let lines = queue.next() {
      if broken { continue }  // the client is gone: keep consuming so nothing waits on us
      for line in lines { encode(line, into: &bytes) }
      broken = !writeAll(bytes)
      if bytes.capacity > 16 << 20 {
        bytes = []
        bytes.reserveCapacity(1 << 20)
      } else {
        bytes.removeAll(keepingCapacity: true)
      }
    }
  }

  private func encode(_ line: Outgoing, into bytes: inout [UInt8]) {
    do {
      try line.write(to: &bytes)
    } catch {
      // A value JSON cannot express (a NaN in a state). A response still gets an answer.
      log.error("cannot encode an outgoing message", ["reason": error.description])
      guard let id = line.responseID else { return }
      let reason = "the result cannot be written as JSON: \(error.reason)"
      try? Outgoing.failure(id: id, error: .internalError(reason)).write(to: &bytes)
    }
  }

  /// Returns false when stdout is closed or broken.
  private func writeAll(_ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { raw in
      guard let base = raw.baseAddress else { return true }
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
          if let onBroken {
            onBroken(errno)
          } else {
            log.error("stdout failed; the remaining output is discarded", ["errno": String(errno)])
          }
          return false
        }
        offset += written
      }
      return true
    }
  }
}

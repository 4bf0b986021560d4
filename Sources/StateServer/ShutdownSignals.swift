import CSignals
import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// SIGTERM, SIGINT and SIGHUP, one call per signal received, on a thread of their own.
///
/// The handler (C, async-signal-safe) writes each signal's number into a pipe; a thread reads
/// it. Every signal that reaches the process is seen exactly once, whichever thread the kernel
/// picks, so "first" and "second" signal mean two distinct signals. The stateserver executable
/// blocks the three signals from its first instruction (CStartupSignals): one that arrives
/// before ``install()`` stays pending and is delivered when it unblocks them, instead of
/// killing the process with the default action.
final class ShutdownSignals: Sendable {
  private let readEnd: Int32

  private init(readEnd: Int32) {
    self.readEnd = readEnd
  }

  /// Installs the handler; signals are queued in the pipe until ``start(_:)``. Nil when no pipe
  /// could be made (the default actions then stay).
  static func install() -> ShutdownSignals? {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { return nil }
    for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
    // A handler must never block: a full pipe drops the signal (hundreds already wait).
    _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
    guard csignals_forward_shutdown_signals(fds[1]) == 0 else { return nil }
    return ShutdownSignals(readEnd: fds[0])
  }

  /// Calls `received` with each signal's number, in order, from the signal thread.
  func start(_ received: @escaping @Sendable (Int32) -> Void) {
    let thread = OSThread(name: "stateserver.signals") { [readEnd] in
      var byte: UInt8 = 0
      while true {
        let count = read(readEnd, &byte, 1)
        if count == 1 {
          received(Int32(byte))
        } else if count < 0 && errno == EINTR {
          continue
        } else {
          return
        }
      }
    }
    thread.start()
  }
}

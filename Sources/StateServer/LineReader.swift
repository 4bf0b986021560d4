import FoundationEssentials
import JSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads stdin on a thread of its own and hands its lines (``LineFramer``) to the ``Inbox``.
/// Before each read the reader waits while the output queue is over its budget, so a client that
/// stops reading stops the server reading too. It reads on after `shutdown` or a signal (the
/// connection answers those lines `-32010`) until stdin ends or the process exits.
final class LineReader: Sendable {
  private let fd: Int32
  private let maxMessageBytes: Int
  private let inbox: Inbox
  private let output: OutputQueue
  /// Called on the reading thread once it stopped reading for good (an attached connection
  /// closes its descriptor only then).
  private let onEnd: (@Sendable () -> Void)?

  init(
    fd: Int32, maxMessageBytes: Int, inbox: Inbox, output: OutputQueue,
    onEnd: (@Sendable () -> Void)? = nil
  ) {
    self.fd = fd
    self.maxMessageBytes = maxMessageBytes
    self.inbox = inbox
    self.output = output
    self.onEnd = onEnd
  }

  /// Starts the reading thread.
  func start() {
    let thread = OSThread(name: "stateserver.stdin") { [self] in run() }
    thread.start()
  }

  private func run() {
    defer { onEnd?() }
    let framer = LineFramer(maxMessageBytes: maxMessageBytes)
    while true {
      output.waitForRoom()
      let (batch, count) = framer.next(from: fd)
      if count <= 0 {
        inbox.push(batch, through: framer.offset)
        return
      }
      // Pushed even when empty (a read inside a long line): a signal's shutdown waits until
      // the input read before it is served, and the offset tells how far that is.
      if !inbox.push(batch, bytes: count, through: framer.offset) { return }
    }
  }
}

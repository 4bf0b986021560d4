import FoundationEssentials
import JSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The ``MainLoop``'s second thread, for while input queues up: it reads and frames stdin into
/// an ``Inbox`` as chunks (``FramedChunk``), then parses them (jansson, then `JSON`) while the
/// main thread reduces and publishes the lines before, so a pipelined client keeps both cores
/// busy. Parsing costs more than serving, so when the main loop has served every parsed line
/// it parses the next waiting chunk itself instead of idling (``Inbox/takeForMainLoop()``):
/// each chunk is parsed by whichever thread claims it first, and served in order.
///
/// Reading belongs to one side at a time. The main loop reads itself while lines come one at a
/// time (a request then costs no hand-off), and hands reading over (``takeOver()``) when a read
/// brings more than one line. This thread gives it back (``Inbox/returnReading()``) as soon as
/// stdin has nothing more to read, behind the lines it queued, so the main loop serves those
/// first and the next lone request is again read without a hand-off. The thread starts at the
/// first hand-over: a client that never pipelines never pays for it.
///
/// Like the reader thread of an attached client, it waits before each read while the output
/// is over its budget, and the inbox bounds the input queued in lines and bytes.
final class ParseAhead: @unchecked Sendable {
  // Safety: `framer` is used by whichever side owns reading, one at a time. The main loop stops
  // using it before ``takeOver()`` sets `reading` under `condition`'s lock, and this thread
  // uses it only after seeing `reading` under that lock; this thread stops using it before
  // ``Inbox/returnReading()`` (under the inbox's lock), and the main loop uses it again only
  // after taking that mark under the same lock. `reading`, `started` and `served` are only
  // touched with `condition` locked; the rest is immutable.
  let framer: LineFramer
  let inbox: Inbox
  private let fd: Int32
  private let output: OutputQueue
  private let condition = Condition()
  private var reading = false
  private var started = false
  /// Batches the main loop has served, released here (``release(_:)``).
  private var served: [[InboundLine]] = []

  /// `wake` is called when lines (or reading) wait for the main loop in the inbox.
  init(
    fd: Int32, framer: LineFramer, output: OutputQueue, maxQueuedInputBytes: Int,
    wake: @escaping @Sendable () -> Void
  ) {
    self.fd = fd
    self.framer = framer
    self.output = output
    self.inbox = Inbox(capacity: 1024, maxBytes: maxQueuedInputBytes, wake: wake)
  }

  /// Hands reading to this thread (started at the first call). The caller must not touch
  /// `framer` until the inbox gives reading back.
  func takeOver() {
    condition.lock()
    reading = true
    let mustStart = !started
    started = true
    condition.signal()
    condition.unlock()
    if mustStart { OSThread(name: "stateserver.parse") { [self] in run() }.start() }
  }

  /// Takes a served batch off the main thread's hands: freeing a batch's parsed requests was a
  /// measurable share of the main thread's work per request (docs/architecture.md, "Both cores
  /// parse"), and this thread allocated them.
  /// While this thread does not read, the batch is freed by the caller as usual. `lines` is
  /// emptied under the lock, so the last reference, and the freeing, is this thread's.
  func release(_ lines: inout [InboundLine]) {
    condition.lock()
    if reading { served.append(lines) }
    lines = []
    condition.unlock()
  }

  private func run() {
    while true {
      condition.lock()
      while !reading { condition.wait() }
      condition.unlock()
      while true {
        framer.retire(takeServed())  // freed on this thread as the next lines are parsed
        // Parse while more than a few chunks wait (or reading more would only wait for room);
        // read on once no more do, so the main loop, when it runs out of parsed lines, always
        // finds chunks to parse itself instead of waiting for this thread.
        if let (number, chunk) = inbox.claimForReader(keeping: Self.chunksKept) {
          inbox.finish(number, chunk.parse { framer.dropRetiredLine() })
          continue
        }
        output.waitForRoom()
        guard hasInput() else {
          parseWaiting()
          condition.lock()
          reading = false
          // Batches released since `takeServed()` above: once `reading` is false no more come,
          // so none is left held while the server idles (the idle trim could not free it).
          let leftover = served
          served = []
          condition.unlock()
          _ = consume leftover  // freed here, outside the lock
          framer.dropRetired()  // the main loop is not to free what this thread took
          // After `reading` is cleared: a takeOver that follows this mark always finds
          // `reading` false and its signal is never lost.
          inbox.returnReading()
          break
        }
        let (chunks, count) = framer.frame(from: fd)
        let open = inbox.push(chunks: chunks, bytes: max(count, 0), through: framer.offset)
        // At the end of input (the last chunk ends with `.endOfInput`) the thread parses what
        // waits and stops for good.
        guard open, count > 0 else {
          parseWaiting()
          return
        }
      }
    }
  }

  /// Chunks left waiting for the main loop while this thread reads on: enough that the main
  /// loop finds one to parse whenever it has served every parsed line, while this thread reads
  /// and frames the next (``FramedChunk/linesPerChunk`` lines each).
  static let chunksKept = 2

  /// Parses every waiting chunk, oldest first (before reading stops).
  private func parseWaiting() {
    while let (number, chunk) = inbox.claim() {
      framer.retire(takeServed())
      inbox.finish(number, chunk.parse { framer.dropRetiredLine() })
    }
  }

  private func takeServed() -> [[InboundLine]] {
    condition.lock()
    defer { condition.unlock() }
    let taken = served
    served = []
    return taken
  }

  /// Whether a read would not block: bytes wait, or the input ended or failed.
  private func hasInput() -> Bool {
    var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    while true {
      let ready = poll(&poller, 1, 0)
      if ready < 0 && errno == EINTR { continue }
      return ready != 0
    }
  }
}

import FoundationEssentials
import JSON

/// One input line as the reader hands it over: already parsed, so the JSON parse runs on the
/// reader thread in parallel with reducing on the main actor.
enum InboundLine: Sendable {
  case message(JSON)
  case malformed(JSONParseError)
  /// A line longer than `--max-message-bytes`, skipped unread; `bytes` is its length.
  case oversize(bytes: Int)
  /// Stdin ended (or the server stopped reading): shut down once the lines before are served.
  case endOfInput
}

/// The hand-off from a reader thread (an attached client's ``LineReader``, or the main loop's
/// ``ParseAhead``) to the main actor. Lines move in batches, one main-actor hop per batch: a
/// hop per line costs about 25 times more (measured here: 5.5 s against 0.2 s per million
/// lines through an AsyncStream).
///
/// The reader waits in ``push(_:bytes:through:)`` while `capacity` lines or `maxBytes` bytes of
/// input are queued, so a main actor that falls behind slows the reader down instead of
/// letting memory grow.
final class Inbox: @unchecked Sendable {
  // Safety: `lines`, `bytes`, `offset`, `returned`, `drainScheduled` and `closed` are only
  // touched with `condition` locked; `capacity`, `maxBytes` and `wake` are immutable.
  private let condition = Condition()
  private var lines: [InboundLine] = []
  private var bytes = 0
  /// Bytes of input read so far, through the last push.
  private var offset = 0
  /// The reader gave reading back to the main loop after the lines queued (``ParseAhead``).
  private var returned = false
  private var drainScheduled = false
  private var closed = false
  private let capacity: Int
  private let maxBytes: Int
  private let wake: @Sendable () -> Void

  /// `wake` is called (outside the lock) when lines arrive and no drain is scheduled; it must
  /// arrange for ``take()`` to be called on the consumer's side.
  init(capacity: Int, maxBytes: Int = 8 << 20, wake: @escaping @Sendable () -> Void) {
    self.capacity = capacity
    self.maxBytes = maxBytes
    self.wake = wake
  }

  /// Queues a batch read from `bytes` bytes of input, which took the input read so far to
  /// `offset` bytes; blocks while the inbox is full. Returns false once closed (stop reading).
  /// A batch with no line (a read that ended inside a long line) still moves ``readOffset`` on.
  @discardableResult
  func push(_ batch: [InboundLine], bytes batchBytes: Int = 0, through offset: Int) -> Bool {
    condition.lock()
    while (lines.count >= capacity || bytes >= maxBytes) && !lines.isEmpty && !closed {
      condition.wait()
    }
    if closed {
      condition.unlock()
      return false
    }
    bytes += batchBytes
    self.offset = offset
    lines.append(contentsOf: batch)
    if case .endOfInput? = batch.last { closed = true }
    let mustWake = !drainScheduled
    drainScheduled = true
    condition.unlock()
    if mustWake { wake() }
    return true
  }

  /// The reader stopped reading and gives stdin back to the main loop: taken with the lines
  /// queued before it (``takeForMainLoop()``), so the main loop reads on only after them.
  func returnReading() {
    condition.lock()
    returned = true
    let mustWake = !drainScheduled
    drainScheduled = true
    condition.unlock()
    if mustWake { wake() }
  }

  /// Everything queued, oldest first. An empty result ends the current drain: the next push
  /// wakes the consumer again.
  func take() -> [InboundLine] {
    takeWithOffset().lines
  }

  /// Bytes of input read so far, as of the last push (the lines they hold may still be queued).
  var readOffset: Int {
    condition.lock()
    defer { condition.unlock() }
    return offset
  }

  /// ``take()``, with the input offset the taken lines reach: once they are served, every
  /// line that began before `offset` has been.
  func takeWithOffset() -> (lines: [InboundLine], offset: Int) {
    let taken = takeForMainLoop()
    return (taken.lines, taken.offset)
  }

  /// ``takeWithOffset()``, and whether the reader gave reading back after these lines
  /// (``returnReading()``).
  func takeForMainLoop() -> (lines: [InboundLine], offset: Int, returned: Bool) {
    condition.lock()
    let taken = (lines, offset, returned)
    lines = []
    bytes = 0
    returned = false
    // Nothing more comes until the next push (or, once reading was given back, until the
    // reader takes over again): that push must wake the consumer.
    if taken.0.isEmpty || taken.2 { drainScheduled = false }
    condition.broadcast()
    condition.unlock()
    return taken
  }
}

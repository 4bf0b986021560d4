import FoundationEssentials

/// The bounded batch channel between a reader thread (an attached client's ``LineReader``, or
/// the library's stdin reader) and the state actor. Lines move in batches, one main-actor hop per
/// batch, not per line: a hop per line cost about 25 times more (docs/architecture.md).
///
/// The reader waits in ``push(_:bytes:through:)`` while `capacity` lines or `maxBytes` bytes of
/// input are queued, so a state actor that falls behind slows the reader down instead of
/// letting memory grow.
final class Inbox: @unchecked Sendable {
  // Safety: every stored `var` is only touched with `condition` locked; `capacity`, `maxBytes`
  // and `wake` are immutable.
  private let condition = Condition()
  /// Parsed lines not taken yet, in input order.
  private var lines: [InboundLine] = []
  /// The input bytes those lines hold.
  private var bytes = 0
  /// Bytes of input read so far, through the last push.
  private var offset = 0
  /// Whether the consumer was woken and has not yet found the inbox empty.
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

  /// Queues a batch read from `batchBytes` bytes of input, which took the input read so far to
  /// `offset` bytes; blocks while the inbox is full. Returns false once closed (stop reading).
  /// A batch with no line (a read that ended inside a long line) still moves ``readOffset`` on.
  @discardableResult
  func push(_ batch: [InboundLine], bytes batchBytes: Int = 0, through offset: Int) -> Bool {
    condition.lock()
    while (lines.count >= capacity || bytes >= maxBytes) && !lines.isEmpty && !closed {
      condition.wait()
    }
    guard !closed else {
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

  /// Bytes of input read so far, as of the last push (the lines they hold may still be queued).
  var readOffset: Int {
    condition.lock()
    defer { condition.unlock() }
    return offset
  }

  /// Everything queued, oldest first, with the input offset the taken lines reach: once they
  /// are served, every line that began before `offset` has been. An empty result ends the
  /// current drain: the next push wakes the consumer again.
  func take() -> (lines: [InboundLine], offset: Int) {
    condition.lock()
    let taken = (lines, offset)
    lines = []
    bytes = 0
    if taken.0.isEmpty { drainScheduled = false }
    condition.broadcast()
    condition.unlock()
    return taken
  }
}

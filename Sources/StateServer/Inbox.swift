import Foundation
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

/// The hand-off from the reader thread to the main actor. Lines move in batches, one
/// main-actor hop per batch: a hop per line costs about 25 times more (FACTS.md).
///
/// The reader waits in ``push(_:)`` while `capacity` lines are queued, so a main actor that
/// falls behind slows the reader down instead of letting memory grow.
final class Inbox: @unchecked Sendable {
  // Safety: `lines`, `drainScheduled` and `closed` are only touched with `condition` locked;
  // `capacity` and `wake` are immutable.
  private let condition = NSCondition()
  private var lines: [InboundLine] = []
  private var drainScheduled = false
  private var closed = false
  private let capacity: Int
  private let wake: @Sendable () -> Void

  /// `wake` is called (outside the lock) when lines arrive and no drain is scheduled; it must
  /// arrange for ``take()`` to be called on the consumer's side.
  init(capacity: Int, wake: @escaping @Sendable () -> Void) {
    self.capacity = capacity
    self.wake = wake
  }

  /// Queues a batch; blocks while the inbox is full. Returns false once closed (stop reading).
  @discardableResult
  func push(_ batch: [InboundLine]) -> Bool {
    condition.lock()
    while lines.count >= capacity && !closed { condition.wait() }
    if closed {
      condition.unlock()
      return false
    }
    lines.append(contentsOf: batch)
    if case .endOfInput? = batch.last { closed = true }
    let mustWake = !drainScheduled
    drainScheduled = true
    condition.unlock()
    if mustWake { wake() }
    return true
  }

  /// Everything queued, oldest first. An empty result ends the current drain: the next push
  /// wakes the consumer again.
  func take() -> [InboundLine] {
    condition.lock()
    let taken = lines
    lines = []
    if taken.isEmpty { drainScheduled = false }
    condition.broadcast()
    condition.unlock()
    return taken
  }

  /// Stops reading: what is queued is still served, followed by ``InboundLine/endOfInput``
  /// (unless the input already ended). Safe from any thread, e.g. a signal handler's queue.
  func finish() {
    condition.lock()
    if closed {
      condition.unlock()
      return
    }
    closed = true
    lines.append(.endOfInput)
    let mustWake = !drainScheduled
    drainScheduled = true
    condition.broadcast()
    condition.unlock()
    if mustWake { wake() }
  }
}

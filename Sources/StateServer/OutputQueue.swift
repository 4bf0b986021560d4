import FoundationEssentials
import JSON
import Synchronization

/// The lines committed by the state actor and not yet taken by the writer thread.
///
/// Lines queue up here only while the writer is busy in `write(2)` (a slow or stopped client).
/// Then a patch merges into the queued patch of the same subscription (``QueueMerging``, in
/// Coalescer.swift with every other kind of merging). A commit into an empty queue (the writer
/// took everything: a client that keeps up) is never merged and costs no work per line: the
/// batch becomes the queue.
///
/// Memory stays bounded in bytes: every line is weighed when committed (its estimated encoded
/// size, ``Outgoing/estimatedBytes``) and counts until the writer has written it. Past
/// `maxBytes` (or `maxMessages` responses and events) the reader stops reading
/// (``waitForRoom()``) and the state actor stops serving the lines it already has (``room()``),
/// so a huge batch or a client that stops reading makes the server stop reading, never grow.
final class OutputQueue: @unchecked Sendable {
  // Safety: every mutable property is read and written only with `condition` locked; the
  // writer thread and the state actor meet nowhere else.
  private let condition = Condition()
  private var lines: [Outgoing] = []
  /// `sizes[i]` is the estimated encoded size of `lines[i]`.
  private var sizes: [Int] = []
  /// Estimated bytes queued or taken by the writer and not yet written.
  private var queuedBytes = 0
  /// Bytes the writer has written so far.
  private var writtenBytes = 0
  private var roomWaiters: [CheckedContinuation<Void, Never>] = []
  /// The writer found stdout closed: nothing will be written again.
  private var broken = false {
    didSet { brokenSeen.store(broken, ordering: .releasing) }
  }
  /// `broken`, readable without the lock: the state actor asks before every request.
  private let brokenSeen = Atomic<Bool>(false)
  /// Someone is writing to stdout: the writer thread with lines it took, or the committer
  /// writing a commit itself (``beginDirectWrite()``).
  private var writing = false
  /// The end of a direct write that the pipe could not take at once, already encoded: the
  /// writer writes it before any line queued after it. Counted in `queuedBytes`.
  private var carried: [UInt8] = []
  private var messageCount = 0
  /// Which queued patch a later one merges into, while the writer is behind.
  private var merging: QueueMerging
  private var finished = false
  private var isDrained = false
  private var onDrained: [@Sendable () -> Void] = []
  private let maxMessages: Int
  private let maxBytes: Int

  /// `maxBytes`: the output budget (``ServerOptions/maxQueuedOutputBytes``).
  init(
    maxMessages: Int, maxBytes: Int = ServerOptions().maxQueuedOutputBytes, mergeAfter: Int = 1024
  ) {
    self.maxMessages = maxMessages
    self.maxBytes = maxBytes
    self.merging = QueueMerging(after: mergeAfter)
  }

  /// Whether the reader and the state actor must wait for the writer. Must be called with the
  /// lock held.
  private var isFull: Bool {
    (messageCount >= maxMessages || queuedBytes >= maxBytes) && !finished && !broken
  }

  /// Adds the lines of one commit. `compact` is called, with the lock held, on each queued patch
  /// that grew by merging and is still the newest of its subscription; it may replace the
  /// operations by the subscribed value.
  ///
  /// Returns whether the output is now over its budget: the caller should then serve nothing
  /// more until ``room()`` returns.
  @discardableResult
  func append(_ batch: consuming [Outgoing], compact: (inout PatchNotice) -> Void) -> Bool {
    let sizes = batch.map(\.estimatedBytes)
    return append(batch, sizes: sizes, compact: compact)
  }

  /// ``append(_:compact:)`` with each line's ``Outgoing/estimatedBytes`` already known.
  ///
  /// The batch is consumed: it becomes the queue when the queue is empty; else each line is
  /// moved out of it (a placeholder without references left behind) into the queue or into the
  /// patch it merges with. Iterating the batch copied each line, retaining its members, only
  /// for the batch to release them all afterwards: atomic operations per line on the main
  /// thread, exactly while the writer is behind.
  @discardableResult
  func append(
    _ batch: consuming [Outgoing], sizes batchSizes: [Int], compact: (inout PatchNotice) -> Void
  ) -> Bool {
    guard !batch.isEmpty else { return false }
    condition.lock()
    defer { condition.unlock() }
    guard !finished else { return false }
    let wasEmpty = lines.isEmpty
    defer { if wasEmpty { condition.broadcast() } }
    for size in batchSizes { queuedBytes += size }
    merging.startIfBehind(lines)
    guard merging.isOn else {
      for index in batch.indices where batch[index].patchEnd == nil { messageCount += 1 }
      // Usually the writer has taken everything: then the batch becomes the queue, no copy.
      if lines.isEmpty {
        lines = batch
        sizes = batchSizes
      } else {
        for index in batch.indices { lines.append(exchange(&batch[index], with: .written)) }
        sizes.append(contentsOf: batchSizes)
      }
      return isFull
    }
    let (messages, bytes) = merging.append(
      &batch, sizes: batchSizes, to: &lines, sizes: &sizes, compact: compact)
    messageCount += messages
    queuedBytes += bytes
    return isFull
  }

  /// Whether the client is behind: lines wait and later patches merge into queued ones.
  var isMerging: Bool {
    condition.lock()
    defer { condition.unlock() }
    return merging.isOn
  }

  /// How many responses and events wait for the client (patches merge, so they are not
  /// counted).
  var queuedMessages: Int {
    condition.lock()
    defer { condition.unlock() }
    return messageCount
  }

  /// Blocks the reader while the output is over its budget.
  func waitForRoom() {
    condition.lock()
    while isFull { condition.wait() }
    condition.unlock()
  }

  /// Returns once the output is under its budget again (at once when it is).
  func room() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      condition.lock()
      if isFull {
        roomWaiters.append(continuation)
        condition.unlock()
      } else {
        condition.unlock()
        continuation.resume()
      }
    }
  }

  /// Whether the output is over its budget now.
  var isOverBudget: Bool {
    condition.lock()
    defer { condition.unlock() }
    return isFull
  }

  /// Bytes written so far: the shutdown tells a slow reader from one that stopped.
  var bytesWritten: Int {
    condition.lock()
    defer { condition.unlock() }
    return writtenBytes
  }

  /// Whether the writer found stdout closed.
  var isBroken: Bool { brokenSeen.load(ordering: .acquiring) }

  /// For the writer: `bytes` of estimated output (as taken from ``next()``) are written, and
  /// `written` real bytes went out.
  func release(_ bytes: Int, written: Int) {
    condition.lock()
    queuedBytes -= bytes
    writtenBytes += written
    wakeIfRoom()
    condition.unlock()
  }

  /// `bytes` more of output wait for the writer: a streamed response's next piece
  /// (``StreamedText``), given back through ``release(_:written:)`` once written.
  func account(_ bytes: Int) {
    condition.lock()
    queuedBytes += bytes
    condition.unlock()
  }

  /// For the writer: stdout is closed; nothing will wait for it again.
  func markBroken() {
    condition.lock()
    broken = true
    wakeIfRoom()
    condition.unlock()
  }

  /// Must be called with the lock held.
  private func wakeIfRoom() {
    guard !isFull else { return }
    condition.broadcast()
    let waiters = roomWaiters
    roomWaiters = []
    for waiter in waiters { waiter.resume() }
  }

  /// For the writer: blocks until lines or carried bytes are queued and takes them all, the
  /// lines with their estimated sizes, which it gives back through ``release(_:written:)``
  /// (carried bytes weigh their count); `nil` once finished and empty.
  func next() -> (carried: [UInt8], lines: [Outgoing], sizes: [Int])? {
    condition.lock()
    defer { condition.unlock() }
    writing = false
    while (lines.isEmpty && carried.isEmpty) || writing {
      if finished && lines.isEmpty && carried.isEmpty && !writing {
        if !isDrained {
          isDrained = true
          let callbacks = onDrained
          onDrained = []
          for callback in callbacks { callback() }
        }
        return nil
      }
      condition.wait()
    }
    let taken = (carried, lines, sizes)
    carried = []
    writing = true
    takeAll()
    return taken
  }

  /// For the committer: true when nothing is queued, carried or being written, and the caller
  /// may then write its lines to stdout itself (skipping the hand-off to the writer thread,
  /// which costs a thread wake-up). Everything committed before has been written, so the order
  /// holds. The caller must call ``endDirectWrite(written:broken:carrying:)``.
  func beginDirectWrite() -> Bool {
    condition.lock()
    defer { condition.unlock() }
    guard lines.isEmpty && carried.isEmpty && !writing && !finished && !broken else {
      return false
    }
    writing = true
    return true
  }

  /// Ends a direct write: `written` bytes went out; `rest`, the bytes that did not fit, is
  /// left to the writer thread, ahead of anything committed later.
  func endDirectWrite(written: Int, broken isBroken: Bool, carrying rest: [UInt8] = []) {
    condition.lock()
    writing = false
    writtenBytes += written
    if isBroken {
      broken = true
      wakeIfRoom()
    } else if !rest.isEmpty {
      carried = rest
      queuedBytes += rest.count
    }
    // Only a writer with something to take is woken; waking an idle writer thread for nothing
    // would cost the very wake-up the direct write saves.
    if !lines.isEmpty || !carried.isEmpty { condition.broadcast() }
    condition.unlock()
  }

  /// Takes what is queued without waiting, as written; nil when nothing is (for tests).
  func takeQueued() -> [Outgoing]? {
    condition.lock()
    defer { condition.unlock() }
    guard !lines.isEmpty else { return nil }
    let taken = lines
    for size in sizes { queuedBytes -= size }
    takeAll()
    wakeIfRoom()
    return taken
  }

  /// Must be called with the lock held.
  private func takeAll() {
    lines = []
    sizes = []
    merging.reset()
    messageCount = 0
    wakeIfRoom()
  }

  /// No more lines will be appended; the writer stops once it has written everything.
  func finish() {
    condition.lock()
    finished = true
    condition.broadcast()
    wakeIfRoom()
    condition.unlock()
  }

  /// Returns once the writer has written every line and ``finish()`` was called.
  func drained() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      condition.lock()
      if isDrained {
        condition.unlock()
        continuation.resume()
        return
      }
      onDrained.append { continuation.resume() }
      condition.unlock()
    }
  }
}

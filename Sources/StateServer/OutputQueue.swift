import Foundation
import JSON

/// The lines committed by the main actor and not yet taken by the writer thread.
///
/// Lines queue up here only while the writer is busy in `write(2)` (a slow or stopped client).
/// Then a patch merges into the queued patch of the same subscription, provided no barrier of
/// its store (an event, `store/closed`, a response carrying state) lies between them: its
/// `from` stays, its `to` moves on, operations are concatenated. Moving a patch earlier keeps
/// every promise of PROTOCOL.md: it still precedes the responses of the actions that caused it,
/// and it never crosses an event of its store. Patches are only merged into lines committed
/// earlier, never within one commit, so a client that keeps up sees one patch per change.
///
/// Merging starts only once `mergeAfter` lines wait (the client is clearly behind): until
/// then a patch per change is cheaper to queue and truer to the client.
///
/// Memory stays bounded: responses and events are counted and the reader pauses past
/// `maxMessages` (``waitForRoom()``); merged patches are compacted by the committer into one
/// whole-state `replace` once their operations outweigh the state.
final class OutputQueue: @unchecked Sendable {
  // Safety: every mutable property is read and written only with `condition` locked; the
  // writer thread and the main actor meet nowhere else.
  private let condition = NSCondition()
  private var lines: [Outgoing] = []
  /// Per store, per subscription path: the index in `lines` of the newest patch that later
  /// patches may merge into.
  private var mergeTargets: [String: [String: Int]] = [:]
  private var messageCount = 0
  /// Whether `mergeTargets` is maintained: from `mergeAfter` queued lines until the writer
  /// takes them.
  private var merging = false
  private let mergeAfter: Int
  private var finished = false
  private var isDrained = false
  private var onDrained: [@Sendable () -> Void] = []
  private let maxMessages: Int

  init(maxMessages: Int, mergeAfter: Int = 1024) {
    self.maxMessages = maxMessages
    self.mergeAfter = mergeAfter
  }

  /// Adds the lines of one commit. `compact` is called, with the lock held, on each queued patch
  /// that grew by merging and is still the newest of its subscription; it may replace the
  /// operations by the subscribed value.
  func append(_ batch: [Outgoing], compact: (inout PatchNotice) -> Void) {
    guard !batch.isEmpty else { return }
    condition.lock()
    defer { condition.unlock() }
    guard !finished else { return }
    let wasEmpty = lines.isEmpty
    defer { if wasEmpty { condition.broadcast() } }
    if !merging && lines.count + batch.count > mergeAfter { startMerging() }
    guard merging else {
      for line in batch {
        if case .patch = line { continue }
        messageCount += 1
      }
      // Usually the writer has taken everything: then the batch becomes the queue, no copy.
      if lines.isEmpty { lines = batch } else { lines.append(contentsOf: batch) }
      return
    }
    var added: [String: [String: Int]] = [:]
    var grown: Set<Int> = []
    for line in batch {
      switch line {
      case .patch(let notice):
        // Merge only a patch that continues the queued one: a subscription made anew in between
        // starts from a later version, and absorbing it would skip the versions between.
        if let target = mergeTargets[notice.store]?[notice.path],
          case .patch(var queued) = lines[target], queued.to == notice.from
        {
          lines[target] = .message(.null, barriers: [])  // drop our reference: merge in place
          queued.absorb(notice)
          lines[target] = .patch(queued)
          grown.insert(target)
        } else {
          lines.append(line)
          // A newer line of this subscription now follows any older target.
          mergeTargets[notice.store]?[notice.path] = nil
          added[notice.store, default: [:]][notice.path] = lines.count - 1
        }
      default:
        lines.append(line)
        messageCount += 1
        for store in line.barriers {
          mergeTargets[store] = nil
          added[store] = nil
        }
      }
    }
    for (store, paths) in added {
      mergeTargets[store, default: [:]].merge(paths) { _, new in new }
    }
    // Only a patch that is still the newest of its subscription, with no barrier after it, may
    // be compacted: the subscribed value now is then exactly its value at the patch's `to`.
    for index in grown {
      guard case .patch(var queued) = lines[index],
        mergeTargets[queued.store]?[queued.path] == index
      else { continue }
      lines[index] = .message(.null, barriers: [])
      compact(&queued)
      lines[index] = .patch(queued)
    }
  }

  /// Indexes the queued patches that later ones may merge into. Must be called with the lock
  /// held.
  private func startMerging() {
    merging = true
    mergeTargets = [:]
    for (index, line) in lines.enumerated() {
      if case .patch(let notice) = line {
        mergeTargets[notice.store, default: [:]][notice.path] = index
      } else {
        for store in line.barriers { mergeTargets[store] = nil }
      }
    }
  }

  /// Whether the client is behind: lines wait and later patches merge into queued ones.
  var isMerging: Bool {
    condition.lock()
    defer { condition.unlock() }
    return merging
  }

  /// How many responses and events wait for the client (patches merge, so they are not
  /// counted).
  var queuedMessages: Int {
    condition.lock()
    defer { condition.unlock() }
    return messageCount
  }

  /// Blocks the reader while too many responses and events wait for the client.
  func waitForRoom() {
    condition.lock()
    while messageCount >= maxMessages && !finished { condition.wait() }
    condition.unlock()
  }

  /// For the writer: blocks until lines are queued and takes them all; `nil` once finished and
  /// empty.
  func next() -> [Outgoing]? {
    condition.lock()
    defer { condition.unlock() }
    while lines.isEmpty {
      if finished {
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
    return takeAll()
  }

  /// Takes what is queued without waiting; nil when nothing is (for tests and diagnostics).
  func takeQueued() -> [Outgoing]? {
    condition.lock()
    defer { condition.unlock() }
    return lines.isEmpty ? nil : takeAll()
  }

  /// Must be called with the lock held.
  private func takeAll() -> [Outgoing] {
    let taken = lines
    lines = []
    mergeTargets = [:]
    merging = false
    messageCount = 0
    condition.broadcast()
    return taken
  }

  /// No more lines will be appended; the writer stops once it has written everything.
  func finish() {
    condition.lock()
    finished = true
    condition.broadcast()
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

import Dispatch
import JSON
import Synchronization

/// Writes a large left-out array's elements as text on two threads: the state's thread writes
/// the even batches straight into the answer, a worker thread writes the odd ones into text of
/// its own, a few batches ahead, and the state's thread appends each in its turn.
///
/// Why: the text of a whole view of a million elements (the answer of a `store/open`, a
/// `state/get`) was a quarter of the open, on one core of two (docs/architecture.md, "The open
/// at scale").
///
/// The bytes are those of one thread writing every batch in order: the batches have the same
/// bounds, each is written by the same code (`ElementText.write`), and they reach the answer in
/// order. An error (an element's `encode(to:)` throws, a value JSON cannot hold) leaves the
/// answer as one thread leaves it, the batches before written, and is thrown from here.
///
/// Memory stays bounded: the worker takes no batch `window` or more past the one the state's
/// thread is at, so at most half a window of batches waits as text.
///
/// Nothing either thread changes is shared but `progress`, under its lock: each thread has its
/// own encoder and its own writer, the encoder's caches (`EncodedDates`, `JSONStringCache`) are
/// per thread, and the array is only read.
///
/// The state's thread never waits for the worker to start: a batch the worker has not taken
/// when its turn comes is written by the state's thread itself, so a busy thread pool slows the
/// answer to one thread's speed, it cannot stall it. It waits only for a batch the worker is
/// writing, and, at the end, for the worker to let go of the array: a copy of its storage
/// still held would make the reducer's next edit of the array copy all of it.
final class ElementPipeline: Sendable {
  /// What the worker wrote of one batch: all its text, or the text before an element that
  /// failed and the error.
  private struct Outcome: Sendable {
    var text: [UInt8]
    var error: (any Error)?
  }

  /// What the two threads share, under the lock.
  private struct Progress: Sendable {
    /// The array, until the state's thread is done with it.
    var source: ElementText?
    /// The batch the state's thread writes or takes next: the worker takes none before it.
    var position = 0
    /// The batch the worker is writing.
    var writing: Int?
    /// The worker's batches not yet taken, by number.
    var written: [Int: Outcome] = [:]
    var stopped = false
    var workerRuns = false
    /// Which thread waits on its semaphore: the other one signals it, once, and clears this.
    var stateThreadWaits = false
    var workerWaits = false
  }

  private enum Step {
    case write
    case take(Outcome)
    case wait
    case stop
  }

  private let count: Int
  private let batch: Int
  private let batches: Int
  private let window: Int
  private let progress: Mutex<Progress>
  // Each signal answers one wait announced under the lock (`stateThreadWaits`, `workerWaits`),
  // so both end at their starting value, 0, which libdispatch requires of a semaphore it frees.
  private let stateThreadWake = DispatchSemaphore(value: 0)
  private let workerWake = DispatchSemaphore(value: 0)

  private init(_ source: ElementText, batch: Int, window: Int) {
    count = source.count
    self.batch = batch
    batches = (source.count + batch - 1) / batch
    self.window = window
    progress = Mutex(Progress(source: source))
  }

  /// Writes all of `source`'s elements, `batch` at a time, as `ElementText.write` writes them,
  /// with a worker thread at most `window` batches ahead.
  static func write(
    _ source: ElementText, batch: Int, window: Int, to writer: inout JSONWriter
  ) throws {
    let pipeline = ElementPipeline(source, batch: max(batch, 1), window: max(window, 2))
    DispatchQueue.global(qos: .userInitiated).async { pipeline.work() }
    defer { pipeline.stop() }
    for index in 0..<pipeline.batches {
      switch pipeline.stateThreadStep(at: index) {
      case .take(let outcome):
        writer.append(contentsOf: outcome.text)
        if let error = outcome.error { throw error }
      default:
        try source.write(pipeline.range(of: index), to: &writer)
      }
    }
  }

  private func range(of index: Int) -> Range<Int> {
    index * batch..<min((index + 1) * batch, count)
  }

  /// Whether the state's thread writes batch `index` itself (`.write`: an even one, or one the
  /// worker has not taken) or takes the worker's text (`.take`), waiting while the worker
  /// writes it. Either way the worker may then go one batch further.
  private func stateThreadStep(at index: Int) -> Step {
    while true {
      let step = progress.withLock { progress -> Step in
        if progress.writing == index {
          progress.stateThreadWaits = true
          return .wait
        }
        progress.position = index + 1
        if progress.workerWaits {
          progress.workerWaits = false
          workerWake.signal()
        }
        return progress.written.removeValue(forKey: index).map(Step.take) ?? .write
      }
      guard case .wait = step else { return step }
      stateThreadWake.wait()
    }
  }

  /// The worker: writes odd batches from the state's thread's position on until all are
  /// written, one fails, or the state's thread stops it.
  private func work() {
    writeBatches()
    // `writeBatches`' copy of the array is gone with its frame: only now may the state's
    // thread go on to edit it.
    progress.withLock { progress in
      progress.workerRuns = false
      if progress.stateThreadWaits {
        progress.stateThreadWaits = false
        stateThreadWake.signal()
      }
    }
  }

  private func writeBatches() {
    let source = progress.withLock { progress -> ElementText? in
      guard !progress.stopped else { return nil }
      progress.workerRuns = true
      return progress.source
    }
    guard let source else { return }
    var writer = JSONWriter(capacity: 1 << 18)
    var index = 1
    while true {
      let step = progress.withLock { progress -> Step in
        guard !progress.stopped else { return .stop }
        // The odd batch at or after the state's thread's position.
        index = max(index, progress.position | 1)
        guard index < batches else { return .stop }
        guard index < progress.position + window else {
          progress.workerWaits = true
          return .wait
        }
        progress.writing = index
        return .write
      }
      switch step {
      case .stop, .take: return
      case .wait:
        workerWake.wait()
        continue
      case .write: break
      }
      writer.truncate(to: 0)
      var outcome = Outcome(text: [], error: nil)
      do {
        try source.write(range(of: index), to: &writer)
      } catch {
        outcome.error = error
      }
      outcome.text = writer.withUnsafeBytes { Array($0) }
      let failed = outcome.error != nil
      progress.withLock { [index] progress in
        progress.written[index] = outcome
        progress.writing = nil
        if progress.stateThreadWaits {
          progress.stateThreadWaits = false
          stateThreadWake.signal()
        }
      }
      // The state's thread throws the error when it comes to this batch: nothing after it
      // is written.
      if failed { return }
      index += 2
    }
  }

  /// Stops the worker and waits until it no longer holds the array (at once when it has not
  /// started: it will find nothing to do).
  private func stop() {
    var runs = progress.withLock { progress -> Bool in
      progress.stopped = true
      progress.source = nil
      if progress.workerWaits {
        progress.workerWaits = false
        workerWake.signal()
      }
      if progress.workerRuns { progress.stateThreadWaits = true }
      return progress.workerRuns
    }
    while runs {
      stateThreadWake.wait()
      runs = progress.withLock { progress -> Bool in
        if progress.workerRuns { progress.stateThreadWaits = true }
        return progress.workerRuns
      }
    }
  }
}

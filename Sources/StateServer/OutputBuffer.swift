import JSON
import StateKit

/// One connection's output before the writer has it: the lines of the turn being served, the
/// patch held at the source for a client behind, and the commit that hands them on.
///
/// Lines wait here while an input batch is served (this client's, or another client's through
/// the hub, ``beginHolding()``), so that a batch's lines reach the writer together and only after
/// the changes they report are on disk (OutputBuffer+Durability.swift). Outside a batch (effects,
/// replies resolved later) each line is committed at once.
@StateActor
final class OutputBuffer {
  let registry: StoreRegistry
  let log: Log
  /// Where committed lines go; the writer thread takes them from there.
  let queue: OutputQueue
  /// Writes a commit at once, without the writer thread, when it can (see
  /// ``StdoutWriter/writeDirectly(_:estimatedBytes:)``); nil: always through the queue.
  var writeDirectly: (@Sendable ([Outgoing], Int) -> Bool)?
  /// Lines of this turn, not yet handed on; a commit that fails turns their acknowledgements
  /// into errors in place (OutputBuffer+Durability).
  var lines: [Outgoing] = []
  private var sizes: [Int] = []
  /// The estimated bytes of `lines`: the input loop commits early past a megabyte.
  private(set) var bytes = 0
  /// While set, lines wait here until ``commit()`` (an input batch of this client, or of another
  /// client through the hub).
  var isHolding = false
  /// Set while another client's batch is served and this client is behind: its patches merge
  /// as they are queued (``Coalescer/hold(_:into:)``), since its queue would merge them
  /// all anyway.
  private var mergesAtSource = false
  /// The newest patch queued while `mergesAtSource`, kept apart so later ones merge into it in
  /// place.
  private var held: HeldPatch?
  /// Merges and compacts patches for a client behind, here and in the queue.
  let coalescer: Coalescer

  init(registry: StoreRegistry, queue: OutputQueue, log: Log) {
    self.registry = registry
    self.queue = queue
    self.log = log
    self.coalescer = Coalescer(registry: registry)
  }

  /// Another client's input batch is being served: this client's lines wait for its end, and
  /// merge at the source when this client is behind (a commit takes the queue's lock, and a
  /// stalled client's queue merges a whole batch of patches at once).
  func beginHolding() {
    isHolding = true
    mergesAtSource = queue.isMerging
  }

  /// The other client's batch ended: what it produced for this client is committed once.
  func endHolding() {
    isHolding = false
    mergesAtSource = false
    commit()
  }

  /// Queues a subscription's patch; held and merged at the source for a client behind.
  func add(patch notice: consuming PatchNotice) {
    // Moved, never copied: a copy retained and released the notice's strings per patch.
    if mergesAtSource {
      if let released = coalescer.hold(consume notice, into: &held) { enqueue(.patch(released)) }
    } else {
      enqueue(.patch(consume notice))
    }
  }

  /// Queues a line that is not a patch: a barrier, so the held patch goes first.
  func add(_ line: consuming Outgoing) {
    releaseHeld()
    enqueue(consume line)
  }

  /// Queues a line and commits it at once unless a batch is being served.
  func emit(_ line: consuming Outgoing) {
    add(consume line)
    if !isHolding { commit() }
  }

  private func enqueue(_ line: consuming Outgoing) {
    let size = line.estimatedBytes
    lines.append(line)
    sizes.append(size)
    bytes += size
  }

  private func releaseHeld() {
    guard let released = held else { return }
    held = nil
    enqueue(.patch(coalescer.release(released)))
  }

  /// Hands what was queued on, written from this thread while the pipe takes it
  /// (``StdoutWriter/writeDirectly(_:estimatedBytes:)``), else by the writer thread: at the end
  /// of each input batch, and at once for output produced outside one (effects, replies
  /// resolved later). Persistent stores' changes are committed first, all in one transaction:
  /// no line reporting a change leaves before the change is on disk
  /// (OutputBuffer+Durability.swift). Returns whether the output is now over its budget.
  @discardableResult
  func commit() -> Bool {
    releaseHeld()
    commitPersistentChanges()
    guard !lines.isEmpty else { return false }
    let committed = lines
    let committedSizes = sizes
    let committedBytes = bytes
    // The queue keeps the buffers; the next batch starts new ones, as large as this one was
    // (growing them line by line from empty cost a copy of each line about ten times a batch).
    lines = []
    lines.reserveCapacity(committed.count)
    sizes = []
    sizes.reserveCapacity(committed.count)
    bytes = 0
    if let writeDirectly, writeDirectly(committed, committedBytes) { return false }
    return queue.append(consume committed, sizes: committedSizes) { coalescer.compact(&$0) }
  }
}

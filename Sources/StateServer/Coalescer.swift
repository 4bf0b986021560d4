import JSON
import StateKit

/// Every way a client that is behind gets fewer, larger patches, in one file: merged at the
/// source while another client's batch is served (``hold(_:into:)``), merged into the patch
/// already queued for the writer (``QueueMerging``, run under the output queue's lock), and
/// compacted into the subscribed value once the merged operations outweigh it (``compact(_:)``).
/// A client that keeps up never reaches any of it: it sees one patch per change.
///
/// Merging keeps every promise of docs/protocol.md: a merged patch still precedes the responses
/// of the actions that caused it, it never crosses a barrier of its store (an event,
/// `store/closed`, a response carrying state), and it only continues a patch whose `to` is its
/// `from`, so no version is skipped.
@StateActor
final class Coalescer {
  let registry: StoreRegistry

  init(registry: StoreRegistry) {
    self.registry = registry
  }

  // MARK: At the source

  /// Merges `notice` into the held patch when it continues the same subscription; else holds
  /// it, and returns the patch held before, which must be queued first. Nothing is queued
  /// between the two, so no barrier is crossed. The weight is left for the output queue to
  /// measure once, when it merges the whole batch.
  func hold(_ notice: consuming PatchNotice, into held: inout HeldPatch?) -> PatchNotice? {
    let (store, path, from, to, operations, cause) = (
      notice.store, notice.path, notice.from, notice.to, notice.operations, notice.cause
    )
    // Mutated through the reference, never through a copy of the notice: a copy would share the
    // operations and make every append copy them all.
    guard let kept = held, kept.notice.to == from, kept.notice.path == path,
      kept.notice.store == store
    else {
      let released = held.map(release)
      held = HeldPatch(notice: notice)
      return released
    }
    kept.notice.to = to
    kept.notice.cause = cause
    guard kept.whole == nil else { return nil }
    kept.notice.operations.append(contentsOf: operations)
    if path.isEmpty, kept.notice.operations.count >= kept.checkAt {
      kept.checkAt *= 2
      collapse(kept)
    }
    return nil
  }

  /// Drops the held operations for the whole state when the state weighs less than they do
  /// (measured at each doubling of their count, so the cost stays proportional to them).
  private func collapse(_ held: HeldPatch) {
    guard let store = registry.store(held.notice.store) else { return }
    let weight = PatchNotice.weight(of: held.notice.operations)
    // Elements the store encodes on demand count a node each at least: enough to decide
    // without encoding them, unless the operations outweigh them.
    guard store.publishedElementsLeftOut < weight,
      nodeCount(store.published, limit: weight) < weight
    else { return }
    held.whole = store
    held.notice.operations = []
  }

  /// The patch to queue for a held one. The state of a collapsed patch's store is still at the
  /// patch's `to`: every change of it since merged into it.
  func release(_ held: HeldPatch) -> PatchNotice {
    if let store = held.whole {
      held.notice.operations = [["op": "replace", "path": "", "value": store.published]]
    }
    return held.notice
  }

  // MARK: Compaction

  /// Replaces a merged patch's operations by the subscribed value itself once they outweigh it,
  /// so a stalled client costs at most about one copy of each state it watches.
  ///
  /// The queue calls it only for a patch that is still the newest of its subscription: the
  /// subtree has not changed since the patch's `to` (a root patch's `to` is the store's version;
  /// a path's subtree may have stayed equal while other parts moved on).
  func compact(_ notice: inout PatchNotice) {
    guard let weight = notice.weight, weight >= 2 * max(notice.checkedWeight, 8),
      let store = registry.store(notice.store),
      let path = try? JSONPointer(parsing: notice.path),
      !path.isRoot || store.version == notice.to
    else { return }
    notice.checkedWeight = weight
    // Elements the store encodes on demand count a node each at least: when they outweigh the
    // operations, the value is not encoded only to be found heavier (O(state) per check).
    guard store.publishedElementsLeftOut(under: path) < weight,
      let value = store.publishedValue(at: path)
    else { return }
    let size = nodeCount(value, limit: weight)
    guard size < weight else { return }
    // The subscribed value itself, as the one operation a subscriber to `path` would get for
    // a change of the whole subtree (`add` under an object, `replace` of an array element).
    let whole = JSONPatch([.replace(path: path, value: value)]).scoped(
      to: path, value: { value }, parentIsObject: { store.publishedValueIsObject(at: path.parent) }
    )
    notice.operations =
      whole?.operations.map(\.json) ?? [["op": "replace", "path": "", "value": value]]
    notice.weight = size
    notice.checkedWeight = size
  }
}

/// A patch merged at the source (``Coalescer/hold(_:into:)``). A class: whether a patch is held
/// is asked before every line queued, and a reference answers without copying the patch out.
@StateActor
final class HeldPatch {
  var notice: PatchNotice
  /// Set once the merged operations of a root subscription outweigh the state: later changes
  /// only move `to`, and the patch becomes one `replace` of the whole state when released, so
  /// no operation is kept (or freed on the state actor) per change.
  var whole: (any AnyStore)?
  /// The operation count at which to compare the operations with the state again (doubling).
  var checkAt = 64

  init(notice: PatchNotice) {
    self.notice = notice
  }
}

/// Merging into the lines queued for the writer: which queued patch a later one continues.
/// Owned by ``OutputQueue`` and used only with its lock held, since the writer thread takes
/// the lines it indexes.
///
/// Merging starts only once more than `after` lines wait untaken when a commit comes (the writer
/// is clearly behind): until then a patch per change is cheaper to queue and truer to the
/// client. Patches are only merged into lines committed earlier, never within one commit, so a
/// client that keeps up sees one patch per change.
struct QueueMerging {
  private let after: Int
  /// Whether `targets` is maintained: from `after` queued lines until the writer takes them.
  private(set) var isOn = false
  /// Per store, per subscription path: the index in the queue of the newest patch that later
  /// patches may merge into.
  private var targets: [String: [String: Int]] = [:] {
    didSet { lastTarget = nil }
  }
  /// The target found last: a client behind on one subscription merges every patch into the
  /// same queued one, found by comparing two strings instead of hashing them. Forgotten
  /// whenever `targets` changes.
  private var lastTarget: (store: String, path: String, index: Int)?

  init(after: Int) {
    self.after = after
  }

  /// The writer took every queued line: nothing is left to merge into.
  mutating func reset() {
    targets = [:]
    isOn = false
  }

  /// Starts merging when more than `after` lines wait untaken. Indexes the queued patches that
  /// later ones may merge into: the newest patch of each subscription with no barrier of its
  /// store after it. Scanned from the newest line back, so the older patches of a subscription
  /// already found are passed over without hashing.
  mutating func startIfBehind(_ lines: [Outgoing]) {
    guard !isOn && lines.count > after else { return }
    isOn = true
    var found: [String: [String: Int]] = [:]
    /// Stores with a barrier among the lines scanned so far (newer than the line at hand).
    var barred: Set<String> = []
    var last: (store: String, path: String)? = nil
    for index in lines.indices.reversed() {
      if case .patch(let notice) = lines[index] {
        if let last, last.store == notice.store, last.path == notice.path { continue }
        last = (notice.store, notice.path)
        guard !barred.contains(notice.store), found[notice.store]?[notice.path] == nil else {
          continue
        }
        found[notice.store, default: [:]][notice.path] = index
      } else {
        for store in lines[index].barriers { barred.insert(store) }
      }
    }
    targets = found
  }

  /// Moves a commit's lines into the queue, merging each patch into the queued patch it
  /// continues, then compacts each patch that grew and is still the newest of its subscription
  /// (with no barrier after it, the subscribed value now is exactly its value at the patch's
  /// `to`). Returns how many responses and events were added (patches are not counted: they
  /// merge) and how the estimated bytes changed by compaction.
  mutating func append(
    _ batch: inout [Outgoing], sizes batchSizes: [Int], to lines: inout [Outgoing],
    sizes: inout [Int], compact: (inout PatchNotice) -> Void
  ) -> (messages: Int, bytes: Int) {
    var messages = 0
    var added: [String: [String: Int]] = [:]
    var grown: Set<Int> = []
    var lastGrown = -1
    for index in batch.indices {
      let size = batchSizes[index]
      let line = exchange(&batch[index], with: .written)
      switch line {
      case .patch(let notice):
        // Merge only a patch that continues the queued one: a subscription made anew in between
        // starts from a later version, and absorbing it would skip the versions between.
        if let target = target(of: notice),
          case .patch(var queued) = lines[target], queued.to == notice.from
        {
          lines[target] = .written  // drop our reference: merge in place
          queued.absorb(notice)
          lines[target] = .patch(queued)
          sizes[target] += size
          if target != lastGrown {
            grown.insert(target)
            lastGrown = target
          }
        } else {
          let (store, path) = (notice.store, notice.path)
          lines.append(line)
          sizes.append(size)
          // A newer line of this subscription now follows any older target.
          targets[store]?[path] = nil
          added[store, default: [:]][path] = lines.count - 1
        }
      default:
        for store in line.barriers {
          targets[store] = nil
          added[store] = nil
        }
        lines.append(line)
        sizes.append(size)
        messages += 1
      }
    }
    for (store, paths) in added {
      targets[store, default: [:]].merge(paths) { _, new in new }
    }
    var bytes = 0
    for index in grown {
      guard case .patch(var queued) = lines[index], targets[queued.store]?[queued.path] == index
      else { continue }
      lines[index] = .message(.null, barriers: [])
      let weight = queued.weight
      compact(&queued)
      if queued.weight != weight {
        let size = queued.estimatedBytes
        bytes += size - sizes[index]
        sizes[index] = size
      }
      lines[index] = .patch(queued)
    }
    return (messages, bytes)
  }

  /// The queued patch that `notice` may merge into.
  private mutating func target(of notice: PatchNotice) -> Int? {
    if let lastTarget, lastTarget.store == notice.store, lastTarget.path == notice.path {
      return lastTarget.index
    }
    guard let index = targets[notice.store]?[notice.path] else { return nil }
    lastTarget = (notice.store, notice.path, index)
    return index
  }
}

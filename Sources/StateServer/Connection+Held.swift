import JSON
import StateKit

/// A patch merged at the source: while another client's input batch is served and this client
/// is behind (its output queue merges), each subscription's patches merge into one as they are
/// made, instead of being queued one by one for the queue to merge. A stalled client then costs
/// the serving client little: bench/attach.
///
/// A class: whether a patch is held is asked before every line queued, and a reference answers
/// without copying the patch out.
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

extension Connection {
  /// Queues a patch while `mergesHeldPatches`: merged in place into the held patch when that is
  /// the same subscription's, else the held one is released first. Nothing is queued between
  /// the two, so no barrier is crossed. The weight is left for the output queue to measure
  /// once, when it merges the whole batch.
  func hold(_ notice: consuming PatchNotice) {
    let (store, path, from, to, operations, cause) = (
      notice.store, notice.path, notice.from, notice.to, notice.operations, notice.cause
    )
    // Mutated through the reference, never through a copy of the notice: a copy would share the
    // operations and make every append copy them all.
    guard let held = heldPatch, held.notice.to == from, held.notice.path == path,
      held.notice.store == store
    else {
      releaseHeld()
      heldPatch = HeldPatch(notice: notice)
      return
    }
    held.notice.to = to
    held.notice.cause = cause
    guard held.whole == nil else { return }
    held.notice.operations.append(contentsOf: operations)
    if path.isEmpty, held.notice.operations.count >= held.checkAt {
      held.checkAt *= 2
      collapseHeld(storeID: store)
    }
  }

  /// Drops the held operations for the whole state when the state weighs less than they do
  /// (measured at each doubling of their count, so the cost stays proportional to them).
  private func collapseHeld(storeID: String) {
    guard let store = registry.store(storeID), let operations = heldPatch?.notice.operations else {
      return
    }
    let weight = PatchNotice.weight(of: operations)
    guard nodeCount(store.published, limit: weight) < weight else { return }
    heldPatch?.whole = store
    heldPatch?.notice.operations = []
  }

  /// Queues the held patch: before any other line, and at the commit. The state of a collapsed
  /// patch's store is still at the patch's `to`: every change of it since merged into it.
  func releaseHeld() {
    guard let released = heldPatch else { return }
    heldPatch = nil
    if let store = released.whole {
      released.notice.operations = [["op": "replace", "path": "", "value": store.published]]
    }
    queue(.patch(released.notice))
  }
}

import JSON
import Testing

@testable import StateServer

@Suite struct OutputQueueTests {
  func patch(_ from: UInt64, _ to: UInt64, store: String = "s") -> Outgoing {
    .patch(
      PatchNotice(
        store: store, path: "", from: from, to: to,
        operations: [["op": "replace", "path": "/n", "value": .integer(Int64(to))]], cause: nil))
  }

  func response(_ id: Int64, barrier: String? = nil) -> Outgoing {
    .message(
      ["jsonrpc": "2.0", "id": .integer(id), "result": [:]], barriers: barrier.map { [$0] } ?? [])
  }

  func summary(_ lines: [Outgoing]) -> [String] {
    lines.map { line in
      switch line {
      case .patch(let notice): "p\(notice.from)-\(notice.to)x\(notice.operations.count)"
      default: "r\(line.responseID?.integerValue ?? -1)"
      }
    }
  }

  @Test func patchesOfOneCommitAreNeverMerged() {
    let queue = OutputQueue(maxMessages: 100, mergeAfter: 0)
    queue.append([patch(0, 1), response(1), patch(1, 2), response(2)]) { _ in }
    #expect(summary(queue.takeQueued() ?? []) == ["p0-1x1", "r1", "p1-2x1", "r2"])
  }

  @Test func aPatchMergesIntoOneTheWriterHasNotTakenYet() {
    let queue = OutputQueue(maxMessages: 100, mergeAfter: 0)
    queue.append([patch(0, 1), response(1)]) { _ in }
    queue.append([patch(1, 2), response(2), patch(2, 3, store: "t")]) { _ in }
    #expect(summary(queue.takeQueued() ?? []) == ["p0-2x2", "r1", "r2", "p2-3x1"])
  }

  @Test func aPatchThatDoesNotContinueTheQueuedOneIsNotMerged() {
    // initialize re-subscribing (qa's bug 8): the new subscription starts at a later version.
    let queue = OutputQueue(maxMessages: 100, mergeAfter: 0)
    queue.append([patch(0, 1), response(1)]) { _ in }
    queue.append([patch(2, 3), response(2)]) { _ in }
    #expect(summary(queue.takeQueued() ?? []) == ["p0-1x1", "r1", "p2-3x1", "r2"])
  }

  @Test func anEventOfTheStoreIsABarrierToMerging() {
    let queue = OutputQueue(maxMessages: 100, mergeAfter: 0)
    queue.append([patch(0, 1), response(7, barrier: "s")]) { _ in }
    queue.append([patch(1, 2)]) { _ in }
    queue.append([patch(2, 3)]) { _ in }
    #expect(summary(queue.takeQueued() ?? []) == ["p0-1x1", "r7", "p1-3x2"])
  }

  @Test func compactionReplacesGrownOperations() {
    let queue = OutputQueue(maxMessages: 100, mergeAfter: 0)
    queue.append([patch(0, 1)]) { _ in }
    var compacted = 0
    for version in 1..<40 {
      queue.append([patch(UInt64(version), UInt64(version + 1))]) { notice in
        compacted += 1
        notice.operations = [["op": "replace", "path": "", "value": ["n": 40]]]
        notice.weight = 3
      }
    }
    let lines = queue.takeQueued() ?? []
    #expect(compacted == 39)
    #expect(summary(lines).count == 1)
    if case .patch(let notice)? = lines.first {
      #expect(notice.from == 0 && notice.to == 40 && notice.operations.count == 1)
    }
  }

  @Test func onlyTheNewestPatchOfASubscriptionIsCompacted() {
    let queue = OutputQueue(maxMessages: 100, mergeAfter: 0)
    queue.append([patch(0, 1)]) { _ in }
    var compacted: [UInt64] = []
    // Grows the queued patch, then an event of the store follows it: not the newest any more.
    queue.append([patch(1, 2), response(9, barrier: "s"), patch(2, 3)]) { compacted.append($0.to) }
    #expect(compacted.isEmpty)
    queue.append([patch(3, 4)]) { compacted.append($0.to) }
    #expect(compacted == [4])
  }

  @Test func nothingMergesBeforeTheBacklogPassesTheThreshold() {
    let queue = OutputQueue(maxMessages: 100, mergeAfter: 3)
    queue.append([patch(0, 1), response(1)]) { _ in }
    queue.append([patch(1, 2)]) { _ in }  // 2 lines waited: not merged
    queue.append([patch(2, 3)]) { _ in }  // 3 lines waited: not merged
    #expect(!queue.isMerging)
    queue.append([patch(3, 4)]) { _ in }  // 4 lines waited: merging starts with this commit
    #expect(summary(queue.takeQueued() ?? []) == ["p0-1x1", "r1", "p1-2x1", "p2-4x2"])
  }

  /// A pipelining client's batch of a thousand requests, committed while the writer keeps up,
  /// costs no merging work; the next commit still merges into its newest patch if it waits.
  @Test func aLargeCommitIntoAnEmptyQueueIsNotMergedButMergedInto() {
    let queue = OutputQueue(maxMessages: 100, mergeAfter: 3)
    queue.append([patch(0, 1), response(1), patch(1, 2), response(2), patch(2, 3)]) { _ in }
    #expect(!queue.isMerging)
    queue.append([patch(3, 4), response(4)]) { _ in }  // 5 lines waited: merges
    #expect(queue.isMerging)
    #expect(
      summary(queue.takeQueued() ?? []) == ["p0-1x1", "r1", "p1-2x1", "r2", "p2-4x2", "r4"])
  }

  /// The targets of a batch committed on the fast path are found when the next commit finds it
  /// waiting: per subscription its newest patch, unless an event of its store came after it.
  @Test func theTargetsOfAQueuedBatchAreItsNewestPatchesBeforeNoBarrier() {
    let queue = OutputQueue(maxMessages: 100, mergeAfter: 0)
    queue.append([
      patch(0, 1), patch(0, 1, store: "t"), patch(1, 2), response(7, barrier: "t"), response(2),
    ]) { _ in }
    queue.append([patch(2, 3), patch(1, 2, store: "t"), patch(3, 4)]) { _ in }
    let lines = queue.takeQueued() ?? []
    #expect(summary(lines) == ["p0-1x1", "p0-1x1", "p1-4x3", "r7", "r2", "p1-2x1"])
    let stores = lines.compactMap { line -> String? in
      if case .patch(let notice) = line { notice.store } else { nil }
    }
    #expect(stores == ["s", "t", "s", "t"])
  }

  @Test func readerWaitsOnlyPastTheBound() {
    let queue = OutputQueue(maxMessages: 2)
    queue.append([response(1)]) { _ in }
    queue.waitForRoom()  // one queued, bound two: returns at once
    queue.append([response(2)]) { _ in }
    _ = queue.takeQueued()
    queue.waitForRoom()  // taken by the writer: room again
    #expect(queue.takeQueued() == nil)
  }

  /// Issue 10: the bound is in bytes, not messages: one answer of a large state fills it.
  @Test func aLargeAnswerFillsTheByteBudget() {
    let queue = OutputQueue(maxMessages: 100, maxBytes: 1000)
    let small: Outgoing = .response(id: 1, result: ["n": 1], barriers: [])
    let large: Outgoing = .response(
      id: 2, result: .string(String(repeating: "x", count: 2000)), barriers: [])
    #expect(!queue.append([small]) { _ in })
    #expect(queue.append([large]) { _ in })
    #expect(queue.isOverBudget)
    _ = queue.takeQueued()
    #expect(!queue.isOverBudget)
  }

  /// The writer gives the bytes back as it writes them; the state actor waiting for room goes on.
  @Test func roomReturnsOnceTheWriterHasWritten() async {
    let queue = OutputQueue(maxMessages: 100, maxBytes: 1000)
    let large: Outgoing = .response(
      id: 2, result: .string(String(repeating: "x", count: 2000)), barriers: [])
    #expect(queue.append([large]) { _ in })
    guard let taken = queue.next() else {
      Issue.record("nothing queued")
      return
    }
    #expect(queue.isOverBudget)  // taken, not written yet: still counted
    let waiting = Task { await queue.room() }
    queue.release(taken.sizes.reduce(0, +), written: 2040)
    await waiting.value
    #expect(!queue.isOverBudget)
    #expect(queue.bytesWritten == 2040)
  }

  /// A closed stdout never makes anyone wait again.
  @Test func aBrokenOutputIsNeverFull() {
    let queue = OutputQueue(maxMessages: 1, maxBytes: 10)
    queue.append([response(1)]) { _ in }
    #expect(queue.isOverBudget)
    queue.markBroken()
    #expect(!queue.isOverBudget && queue.isBroken)
    queue.waitForRoom()
  }
}

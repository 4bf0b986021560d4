import JSON
import Synchronization
import Testing

@testable import StateServer

/// The bounded batch channel between a reader thread and the state actor.
@Suite struct InboxTests {
  func describe(_ lines: [InboundLine]) -> [String] {
    lines.map { line in
      switch line {
      case .request, .message, .openFromText: line.message?.description ?? ""
      case .malformed(let error): "malformed at \(error.position)"
      case .oversize(let bytes, _): "oversize \(bytes)"
      case .endOfInput: "end"
      }
    }
  }

  @Test func batchesAreTakenInInputOrderWithTheOffsetTheyReach() {
    let wakes = Atomic(0)
    let inbox = Inbox(capacity: 100) { wakes.add(1, ordering: .relaxed) }
    #expect(inbox.push([.message([1]), .message([2])], bytes: 8, through: 8))
    #expect(inbox.push([.oversize(bytes: 99, id: nil)], bytes: 100, through: 108))
    // Woken once for the drain, however many pushes come before the take.
    #expect(wakes.load(ordering: .relaxed) == 1)
    let taken = inbox.take()
    #expect(describe(taken.lines) == ["[1]", "[2]", "oversize 99"])
    #expect(taken.offset == 108)
    // The drain goes on until a take finds nothing; the next push wakes again.
    #expect(inbox.take().lines.isEmpty)
    #expect(inbox.push([.message([3])], bytes: 4, through: 112))
    #expect(wakes.load(ordering: .relaxed) == 2)
  }

  @Test func aBatchWithNoLineStillMovesTheReadOffsetOn() {
    let inbox = Inbox(capacity: 100) {}
    inbox.push([], bytes: 4096, through: 4096)
    #expect(inbox.readOffset == 4096)
    #expect(inbox.take().offset == 4096)
  }

  @Test func theEndOfInputClosesTheInbox() {
    let inbox = Inbox(capacity: 100) {}
    #expect(inbox.push([.message([1]), .endOfInput], through: 4))
    #expect(!inbox.push([.message([2])], through: 8))
    #expect(describe(inbox.take().lines) == ["[1]", "end"])
  }

  @Test func aFullInboxHoldsTheReaderUntilTheConsumerTakes() async {
    let inbox = Inbox(capacity: 2) {}
    #expect(inbox.push([.message([1]), .message([2])], through: 2))
    let pushed = Atomic(false)
    let reader = OSThread(name: "test.reader") {
      inbox.push([.message([3])], through: 3)
      pushed.store(true, ordering: .releasing)
    }
    reader.start()
    // Whenever the reader runs, its line cannot join this take: the inbox is full until it.
    #expect(describe(inbox.take().lines) == ["[1]", "[2]"])
    var lines: [InboundLine] = []
    while lines.isEmpty {
      lines = inbox.take().lines
      if lines.isEmpty { await Task.yield() }
    }
    #expect(describe(lines) == ["[3]"])
    let pushedAfterTheTake = pushed.load(ordering: .acquiring)
    #expect(pushedAfterTheTake)
  }
}

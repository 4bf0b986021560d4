import JSON
import StateKit

/// How input reaches the connection and how fast: lines from the reader thread's ``Inbox`` or
/// from the ``MainLoop``, served in order, paused between two lines while the output is over
/// its budget (``OutputQueue``), and the input offset a signal's shutdown waits for.
extension Connection {

  /// Serves what the reader queued; called once per wake-up of the inbox. It takes again
  /// after serving, in the same job, until the take comes back empty (which ends the drain:
  /// the next push wakes it again), so a lone request costs one main-actor job, not two. After
  /// ``drainRunBatches`` batches in a row it goes on in a new job instead, so the state actor's
  /// other work (effects, signals, attached clients) runs between batches of a busy client.
  /// When the output goes over its budget it stops between two lines and goes on once the
  /// writer has made room, so one read of many large answers never holds more than the budget.
  func drainInbox() {
    guard let inbox else { return }
    for _ in 0..<Self.drainRunBatches {
      if held.isEmpty {
        var taken = inbox.take()
        held = taken.lines[...]
        heldOffset = taken.offset
        taken.lines = []  // `held` alone holds them: a line served can be let go (serve)
        guard !held.isEmpty else {
          served(through: heldOffset)
          return
        }
      }
      let full = serve(&held)
      if held.isEmpty { servedAllHeld() }
      if full {
        Task { @StateActor in
          await self.output.room()
          self.drainInbox()
        }
        return
      }
    }
    Task { @StateActor in self.drainInbox() }
  }

  /// Batches one drain job serves before it lets the state actor's other jobs run.
  static let drainRunBatches = 4

  /// Serves the lines the main loop read (``MainLoop``); `offset` is the input they reach.
  /// Every held line is served: the empty slice lets go of the lines' array too, which it
  /// would otherwise keep, with every line in it, until the next read (a `store/open`'s whole
  /// parsed state, kept while the client waits, or for ever if it sends nothing more).
  private func servedAllHeld() {
    held = []
    served(through: heldOffset)
  }

  func receive(read lines: consuming [InboundLine], through offset: Int) {
    // Usually nothing is held: then `held` shares the batch's buffer instead of copying it,
    // and holds it alone, so that a line served can be let go (serve).
    if held.isEmpty { held = (consume lines)[...] } else { held.append(contentsOf: lines) }
    heldOffset = offset
    serveHeld()
  }

  /// Whether the main loop may read more: nothing is held back and the output has room.
  /// When the output is full, a task waits for room: its resumption is the main-queue work
  /// that wakes the main loop to read again (the writer thread alone would not).
  var wantsInput: Bool {
    guard held.isEmpty else { return false }  // serveHeld already waits for room
    guard output.isOverBudget else { return true }
    if !waitingForRoom {
      waitingForRoom = true
      Task { @StateActor in
        await self.output.room()
        self.waitingForRoom = false
      }
    }
    return false
  }

  func serveHeld() {
    let full = serve(&held)
    if held.isEmpty { servedAllHeld() }
    guard full else { return }
    // Resumed as a main-queue job, which also wakes the main loop to read again.
    Task { @StateActor in
      await self.output.room()
      if !self.held.isEmpty { self.serveHeld() }
    }
  }

  /// Serves every line, whatever the output budget (tests drive the connection with it).
  func receive(_ lines: [InboundLine]) {
    var lines = lines[...]
    while !lines.isEmpty { _ = serve(&lines) }
  }

  /// Serves lines from the front of `lines` until none is left or the output is over budget;
  /// returns whether it is. Commits whenever a megabyte of output is waiting, so the writer
  /// works while a long read is still being served.
  func serve(_ lines: inout ArraySlice<InboundLine>) -> Bool {
    // The other clients' lines are committed once, at the end (Hub.holdCommits).
    hub?.holdCommits(except: self)
    defer { hub?.commitHeld(except: self) }
    buffer.isHolding = true
    var full = false
    while let first = lines.indices.first {
      if lines[first].isStoreOpen {
        // Moved out of the batch, which would hold its parsed state through the whole open:
        // passed down owned, it is freed once the store has decoded it.
        let line = lines[first]
        lines[first] = .endOfInput
        switch consume line {
        case .request(let request): router.receive(owned: request, on: self)
        case .openFromText(let request, let text):
          router.receive(owned: request, text: text, on: self)
        default: break
        }
      } else {
        // Borrowed where it lies, not copied out: the reader's thread frees the line once
        // served, so a copy here was a retain and a release of its values on this thread.
        router.receive(lines[first], on: self)
      }
      lines = lines[lines.index(after: first)...]
      if buffer.bytes >= 1 << 20 {
        full = commit()
        if full { break }
      }
    }
    buffer.isHolding = false
    return commit() || full
  }
}

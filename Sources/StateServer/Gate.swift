import StateKit

/// A one-way gate on the state actor: tasks wait until it opens; it never closes again.
@StateActor
final class Gate {
  private(set) var isOpen = false
  private var waiters: [CheckedContinuation<Void, Never>] = []

  func open() {
    guard !isOpen else { return }
    isOpen = true
    for waiter in waiters { waiter.resume() }
    waiters = []
  }

  func wait() async {
    guard !isOpen else { return }
    await withCheckedContinuation { waiters.append($0) }
  }

  /// Runs `work` for at most `timeout`; returns whether it finished in time. The work is
  /// cancelled when the time is up.
  static func waitAtMost(_ timeout: Duration, _ work: @escaping @StateActor () async -> Void) async
    -> Bool
  {
    let gate = Gate()
    let done = Gate()
    let worker = Task { @StateActor in
      await work()
      done.open()
      gate.open()
    }
    let timer = Task { @StateActor in
      try? await Task.sleep(for: timeout)
      gate.open()
    }
    await gate.wait()
    worker.cancel()
    timer.cancel()
    return done.isOpen
  }
}

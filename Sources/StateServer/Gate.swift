/// A one-way gate on the main actor: tasks wait until it opens; it never closes again.
@MainActor
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
  static func waitAtMost(_ timeout: Duration, _ work: @escaping @MainActor () async -> Void) async
    -> Bool
  {
    let gate = Gate()
    let done = Gate()
    let worker = Task { @MainActor in
      await work()
      done.open()
      gate.open()
    }
    let timer = Task { @MainActor in
      try? await Task.sleep(for: timeout)
      gate.open()
    }
    await gate.wait()
    worker.cancel()
    timer.cancel()
    return done.isOpen
  }
}

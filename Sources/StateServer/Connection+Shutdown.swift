import JSON
import StateKit

/// The end of a connection, whatever started it: end of input, `shutdown`, SIGTERM or SIGINT.
extension Connection {
  /// Starts the shutdown (end of input, `shutdown`, a signal): refuse new requests, let effects
  /// finish for up to the drain timeout, cancel the rest, flush persistence and every pending
  /// line, then stop with status 0.
  func beginShutdown(reason: String) {
    guard phase == .serving else { return }
    if role != .owner {
      // An attached client's end ends only its connection (Hub).
      hub?.detach(self, reason: reason)
      return
    }
    phase = .draining
    inbox?.finish()
    log.info("shutting down", ["reason": reason])
    hub?.ownerBeganShutdown()
    Task { @MainActor in await self.drainAndStop() }
  }

  func drainAndStop() async {
    let stores = registry.openStores
    let idle = await Gate.waitAtMost(options.drainTimeout) {
      for store in stores { await store.idle() }
    }
    if !idle { log.warning("effects still running after the drain timeout are cancelled") }
    registry.closeAll()
    // Closing resolves the "settled" waits; give their replies the same bounded time.
    let waiting = pending.values.flatMap { $0 }.filter { reply in
      !reply.isResolved && !shutdownReplies.contains { $0 === reply }
    }
    _ = await Gate.waitAtMost(options.drainTimeout) {
      for reply in waiting { await reply.resolved() }
    }
    for reply in waiting { reply.fail(.shuttingDown) }
    await registry.persistence?.flush()
    for reply in shutdownReplies { reply.succeed([:]) }
    commit()
    output.finish()
    await output.drained()
    stop(0)
  }

  func stop(_ code: Int32) {
    exitCode = code
    stopped?.resume(returning: code)
    stopped = nil
  }

  /// Returns the exit status once the connection has stopped.
  func finished() async -> Int32 {
    if let exitCode { return exitCode }
    return await withCheckedContinuation { stopped = $0 }
  }
}

import JSON
import StateKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The end of a connection, whatever started it: end of input, `shutdown`, a signal (SIGTERM,
/// SIGINT, SIGHUP), or a client that closed our stdout.
extension Connection {
  /// Starts the shutdown: refuse new requests (`-32010`, for as long as the process lives: the
  /// reader keeps reading), let effects finish for up to the drain timeout, cancel the rest,
  /// flush persistence and every pending line, then stop with status 0.
  func beginShutdown(reason: String) {
    guard lifecycle.drain() else { return }
    if role != .owner {
      // An attached client's end ends only its connection (Hub).
      hub?.detach(self, reason: reason)
      return
    }
    log.info("shutting down", ["reason": reason])
    hub?.ownerBeganShutdown()
    Task { @StateActor in await self.drainAndStop() }
  }

  /// A shutdown signal. The first one drains, whatever else already began a drain (an editor
  /// closes our stdin and then sends SIGTERM: that is one request to stop, not two). Only a
  /// second signal exits at once, and even then after persisting what is pending.
  ///
  /// The requests written before the signal are served first, as end of input would serve
  /// them: the drain begins once the reader has handed over what stdin held at the signal
  /// (what it had read, plus what waited in the pipe) and it is served. A reader that cannot
  /// get there (the client stopped reading our output) gets a drain timeout, then the drain
  /// begins anyway; later requests are refused `-32010`.
  func received(signal number: Int32) {
    let second = lifecycle.receivedSignal {
      // The offset first, then the pipe: a line read in between is counted by neither and is
      // at worst refused, never waited for.
      let offset = inputOffset()
      return offset + unreadInput()
    }
    guard second else {
      log.info("signal received; draining", ["signal": String(number)])
      guard lifecycle.isServing else { return }
      served(through: servedOffset)
      Task { @StateActor in
        try? await Task.sleep(for: self.options.drainTimeout)
        self.beginShutdown(reason: "signal \(number)")
      }
      return
    }
    log.warning("second signal; exiting without draining", ["signal": String(number)])
    Task { @StateActor in
      _ = await Gate.waitAtMost(self.options.drainTimeout) {
        await self.registry.persistence?.flush()
      }
      Log.flush()
      exit(128 + number)
    }
  }

  /// The lines that began before `offset` in the input have been served: a signal's shutdown
  /// waiting for them begins.
  func served(through offset: Int) {
    servedOffset = offset
    if case .serving(let drainAt?) = lifecycle, offset >= drainAt {
      beginShutdown(reason: "signal")
    }
  }

  func drainAndStop() async {
    let stores = registry.openStores
    let idle = await Gate.waitAtMost(options.drainTimeout) {
      for store in stores { await store.idle() }
    }
    if !idle { log.warning("effects still running after the drain timeout are cancelled") }
    for failure in registry.closeAll() {
      log.error("a store's last changes could not be saved", ["reason": failure.reason])
    }
    // Closing resolves the "settled" waits; give their replies the same bounded time.
    let shutdownReplies = lifecycle.shutdownReplies
    let waiting = router.unresolved.filter { reply in
      !shutdownReplies.contains { $0 === reply }
    }
    _ = await Gate.waitAtMost(options.drainTimeout) {
      for reply in waiting { await reply.resolved() }
    }
    for reply in waiting { reply.fail(.shuttingDown) }
    await registry.persistence?.flush()
    for reply in lifecycle.shutdownReplies { reply.succeed([:]) }
    commit()
    output.finish()
    await writeOutOrAbandon()
    stop(0)
  }

  /// Waits until the writer has written everything, as long as the client reads: output that
  /// makes no progress for a whole drain timeout is abandoned (a client that stopped reading
  /// must not keep a terminated server alive).
  private func writeOutOrAbandon() async {
    let output = self.output
    while true {
      let before = output.bytesWritten
      let written = await Gate.waitAtMost(options.drainTimeout) { await output.drained() }
      if written { return }
      if output.bytesWritten == before {
        log.warning("the client stopped reading; the output left is abandoned")
        return
      }
    }
  }

  func stop(_ code: Int32) {
    lifecycle.stop(status: code)
    ended.open()
  }

  /// Returns the exit status once the connection has stopped.
  func finished() async -> Int32 {
    await ended.wait()
    return lifecycle.status ?? 0
  }
}

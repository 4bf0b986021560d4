import JSON
import StateKit

/// `clock/now` and `clock/advance`: virtual time over the wire.
extension Connection {
  /// The longest one `clock/advance` moves: a year, far past any feature's timer, and far
  /// from `Duration`'s overflow.
  nonisolated static let maximumAdvanceMs: Int64 = 365 * 86_400_000

  func clockNow() -> Outcome {
    .result(Self.clockReading(options.clock))
  }

  /// Answers once every effect due by the new time has run and its patches were queued (they
  /// are written before this response: a store queues its publication while it reduces).
  func advanceClock(_ params: AdvanceParams, id: JSON?) throws(RPCError) -> Outcome {
    let clock = options.clock
    guard clock.mode == .virtual else {
      throw .invalidParams(
        pointer: "",
        reason: "the server's clock is real time; start it with --clock virtual, or send "
          + "initialize {\"clock\": \"virtual\"} first, to move time with clock/advance")
    }
    guard (0...Self.maximumAdvanceMs).contains(params.ms) else {
      throw .invalidParams(
        pointer: "/ms",
        reason: "expected milliseconds from 0 to \(Self.maximumAdvanceMs), got \(params.ms)")
    }
    let registry = self.registry
    let settle: @StateActor () async -> Void = {
      for case let store as any EffectSettling in registry.openStores {
        await store.settleEffects()
      }
    }
    guard let id else {
      Task { @StateActor in await clock.advance(by: .milliseconds(params.ms), settling: settle) }
      return .result([:])
    }
    let reply = PendingReply(id: id)
    reply.work = Task { @StateActor [weak reply] in
      await clock.advance(by: .milliseconds(params.ms), settling: settle)
      reply?.succeed(Self.clockReading(clock))
    }
    return .later(reply)
  }

  /// Chooses the clock at `initialize`: real time may become virtual, not back (effects asleep
  /// on virtual time would never wake).
  func chooseClock(_ choice: ClockChoice?) throws(RPCError) {
    guard let choice else { return }
    let clock = options.clock
    switch (choice, clock.mode) {
    case (.virtual, _): clock.mode = .virtual
    case (.real, .real): break
    case (.real, .virtual):
      throw .invalidParams(
        pointer: "/clock",
        reason: "the server's clock is already virtual and cannot go back to real time")
    }
  }

  nonisolated static func clockReading(_ clock: ServerClock) -> JSON {
    let offset = clock.now.offset.components
    let ms = offset.seconds * 1000 + offset.attoseconds / 1_000_000_000_000_000
    return ["clock": .string(clock.mode.rawValue), "now": .integer(ms)]
  }
}

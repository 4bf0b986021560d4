import StateKit
import Synchronization

/// The clock every effect of the server's features sleeps on: real time by default, or, with
/// `--clock virtual` (or `initialize {clock: "virtual"}`), a ``VirtualClock`` that only
/// `clock/advance` moves, so a client's test of a debounce or a timeout never sleeps.
///
/// ```swift
/// let clock = options.clock   // ServerOptions holds the one instance
/// let backend = Backend(seed: 7, latencyMs: 50, failRate: 0, clock: clock)
/// Features.all(backend: backend, clock: clock)
/// ```
///
/// One clock whose mode is chosen at start (or by the first `initialize`, before a test
/// dispatches anything), rather than a clock chosen per feature when it is built: features are
/// built before the handshake, and a spawned test server asks for virtual time in it.
public final class ServerClock: Clock, Sendable {
  public typealias Instant = VirtualClock.Instant
  public typealias Duration = Swift.Duration

  /// How the clock moves.
  public enum Mode: String, Sendable, CaseIterable {
    /// Real, monotonic time (`ContinuousClock`).
    case real
    /// Time that moves only with `clock/advance`.
    case virtual
  }

  /// The virtual time, moved by `clock/advance`.
  public let virtual = VirtualClock()
  private let origin = ContinuousClock.now
  private let state = Mutex(Mode.real)
  /// The advance in progress, which the next one waits for: two `clock/advance` requests in
  /// flight move time one after the other, never interleaved.
  private let lastAdvance = Mutex<Task<Void, Never>?>(nil)

  public init(mode: Mode = .real) { state.withLock { $0 = mode } }

  public var mode: Mode {
    get { state.withLock { $0 } }
    set { state.withLock { $0 = newValue } }
  }

  public var now: Instant {
    switch mode {
    case .virtual: virtual.now
    case .real: Instant(offset: origin.duration(to: ContinuousClock.now))
    }
  }

  public var minimumResolution: Duration { .zero }

  /// The mode is read when the sleep begins: a sleep begun in real time ends in real time.
  public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    switch mode {
    case .virtual:
      try await virtual.sleep(until: deadline, tolerance: tolerance)
    case .real:
      try await ContinuousClock().sleep(
        until: origin.advanced(by: deadline.offset), tolerance: tolerance)
    }
  }

  /// Moves virtual time by `duration` once every earlier advance is done, after `settle` has
  /// let every effect just started reach its sleep; returns when each effect due by then has
  /// run and slept again or ended.
  @StateActor
  func advance(by duration: Duration, settling settle: @escaping @StateActor () async -> Void)
    async
  {
    let task = lastAdvance.withLock { last -> Task<Void, Never> in
      let previous = last
      let task = Task { @StateActor [virtual] in
        await previous?.value
        await settle()
        await virtual.advance(by: duration)
        await settle()
      }
      last = task
      return task
    }
    await task.value
  }
}

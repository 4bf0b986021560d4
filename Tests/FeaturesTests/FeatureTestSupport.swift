import Features
import Foundation
import JSON
import StateKit
import StateKitTesting
import Synchronization

/// A wall clock stopped at one instant, so timestamps in expected states are known.
let fixedWallClock = WallClock { Date(timeIntervalSince1970: 1_800_000_000) }
let fixedTimestamp = fixedWallClock.timestamp()
/// A users list loaded at `fixedTimestamp`: fresh for the default 5 minutes (written out, not
/// computed by the code under test).
let freshLoad = LoadState(
  status: .loaded, lastUpdated: fixedTimestamp, expiresAt: "2027-01-15T08:05:00.000Z")

/// A backend on `clock` with the default 50 ms latency.
func testBackend(clock: TestClock, failRate: Double = 0, seed: UInt64 = 1) -> Backend {
  Backend(seed: seed, latencyMs: 50, failRate: failRate, clock: clock)
}

/// The 50 users every backend serves.
func sampleUsers() async -> [User] {
  (try? await Backend(latencyMs: 0, clock: ContinuousClock()).listUsers()) ?? []
}

/// Runs a wire action through a real store and returns how it was refused, if it was.
@MainActor
func refusal<F: Feature>(of wire: JSON, by feature: F) -> ActionError? {
  let store = Store(feature: feature)
  defer { store.close() }
  do throws(ActionError) {
    _ = try store.send(wire: wire, cause: nil)
    return nil
  } catch {
    return error
  }
}

extension ActionError {
  /// The pointer of an `.invalid` refusal.
  var pointer: String? {
    if case .invalid(let pointer, _) = self { return pointer }
    return nil
  }
}

extension TestClock {
  /// Runs the clock until `store`'s effects have all finished. One `run()` can return while
  /// an effect, slowed by a busy machine, has yet to start its next sleep; this runs again
  /// until nothing is in flight (for at most `limit` of real time: only a failure bound).
  @MainActor
  func run<F: Feature>(until store: TestStore<F>, limit: Duration = .seconds(60)) async {
    let deadline = ContinuousClock.now.advanced(by: limit)
    await run()
    while store.store.inFlightEffectCount > 0 && ContinuousClock.now < deadline {
      await Task.yield()
      await run()
    }
  }
}

extension TestClock {
  /// Advances by `duration` once at least `sleepers` tasks sleep on this clock (waiting at
  /// most `limit` of real time, only a failure bound): on a busy machine, with tests running in
  /// parallel, an effect can start its sleep after `advance` already moved time past it.
  func advance(by duration: Duration, once sleepers: Int, limit: Duration = .seconds(30)) async {
    let deadline = ContinuousClock.now.advanced(by: limit)
    while sleeperCount < sleepers && ContinuousClock.now < deadline { await Task.yield() }
    await advance(by: duration)
  }
}

/// A wall clock a test moves by hand, starting at `fixedWallClock`'s instant: for ages and
/// times to live.
final class MovableWallClock: Sendable {
  private let date = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

  var wallClock: WallClock { WallClock { self.date.withLock { $0 } } }

  func advance(bySeconds seconds: TimeInterval) {
    date.withLock { $0 = $0.addingTimeInterval(seconds) }
  }
}

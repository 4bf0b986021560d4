import Features
import Foundation
import JSON
import StateKit
import StateKitTesting
import Synchronization
import Testing

/// A wall clock stopped at one instant, so timestamps in expected states are known.
let fixedWallClock = WallClock { fixedTimestamp }
/// 2027-01-15T08:00:00.000Z.
let fixedTimestamp = Date(timeIntervalSince1970: 1_800_000_000)
/// A users list loaded at `fixedTimestamp`: fresh for the default 5 minutes (written out, not
/// computed by the code under test).
let freshLoad = LoadState(
  status: .loaded, lastUpdated: fixedTimestamp, expiresAt: fixedTimestamp.addingTimeInterval(300))

/// A backend on `clock` with the default 50 ms latency.
func testBackend(clock: TestClock, failRate: Double = 0, seed: UInt64 = 1) -> Backend {
  Backend(seed: seed, latencyMs: 50, failRate: failRate, clock: clock)
}

/// The 50 users every backend serves.
func sampleUsers() async -> [User] {
  (try? await Backend(latencyMs: 0, clock: ContinuousClock()).listUsers()) ?? []
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

extension TestStore where F == UsersFeature {
  /// Moves `clock` by `delay` (the time to live, by default) and expects the expiry timer of
  /// the last load to mark the list stale: every test that loads a list ends with that timer,
  /// which `finish()` would otherwise find still running.
  func expireList(
    on clock: TestClock, after delay: Duration = UsersFeature.defaultTimeToLive,
    sourceLocation: SourceLocation = #_sourceLocation
  ) async {
    await clock.advance(by: delay)
    await receive(
      .internal(.expired), assert: { $0.load.isStale = true }, sourceLocation: sourceLocation)
  }
}

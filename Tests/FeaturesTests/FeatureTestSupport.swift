import Features
import Foundation
import JSON
import StateKit

/// A wall clock stopped at one instant, so timestamps in expected states are known.
let fixedWallClock = WallClock { Date(timeIntervalSince1970: 1_800_000_000) }
let fixedTimestamp = fixedWallClock.timestamp()

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

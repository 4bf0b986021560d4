import Features
import StateKit
import Synchronization
import Testing

/// The backend's side of the users feature's sources: the fallback endpoint and its switches,
/// versioned renames, and remote edits pushed to observers.
@Suite struct BackendUsersTests {
  @Test func theFallbackHasItsOwnSwitches() async throws {
    let backend = instantBackend()
    await backend.setOnline(false)
    await #expect(throws: BackendError.offline) { try await backend.listUsers() }
    #expect(try await backend.listUsersFromFallback().count == 50)
    await backend.setFallbackOnline(false)
    await #expect(throws: BackendError.offline) { try await backend.listUsersFromFallback() }
    await backend.setFallbackOnline(true)
    await backend.setFallbackFailRate(1)
    await #expect(throws: BackendError.network) { try await backend.listUsersFromFallback() }
    let status = await backend.currentStatus
    #expect(status.fallback == FallbackStatus(online: true, failRate: 1))
    #expect(status.online == false && status.failRate == 0)
    #expect(status.requests == ["listUsersFallback": 2])
  }

  @Test func theFallbacksFailureRateFollowsThePrimarysUnlessGiven() {
    let same = Backend(failRate: 0.25, clock: ContinuousClock())
    #expect(same.initialStatus.fallback.failRate == 0.25)
    let own = Backend(failRate: 1, fallbackFailRate: 0, clock: ContinuousClock())
    #expect(own.initialStatus.fallback.failRate == 0 && own.initialStatus.failRate == 1)
  }

  @Test func aRenameOnAnOlderVersionIsAConflict() async throws {
    let backend = instantBackend()
    let renamed = try await backend.renameUser(id: 42, name: "Mine", baseVersion: 1)
    #expect((renamed.name, renamed.version) == ("Mine", 2))
    await #expect(throws: BackendError.conflict(serverText: "Mine", revision: 2)) {
      try await backend.renameUser(id: 42, name: "Stale", baseVersion: 1)
    }
    await #expect(throws: BackendError.notFound) {
      try await backend.renameUser(id: 999, name: "Nobody", baseVersion: 1)
    }
    #expect(try await backend.listUsers()[41] == renamed)
  }

  @StateActor
  @Test func aRemoteUserEditRaisesTheVersionAndIsPushed() async throws {
    let backend = instantBackend()
    let pushed = Mutex<[User]>([])
    backend.observeUsers { user in
      pushed.withLock { $0.append(user) }
      return true
    }
    let edited = try #require(await backend.remoteUserEdit(id: 7, name: "Theirs"))
    #expect((edited.name, edited.version) == ("Theirs", 2))
    #expect(pushed.withLock { $0 } == [edited])  // before remoteUserEdit returned
    #expect(await backend.remoteUserEdit(id: 999, name: "x") == nil)
    #expect(pushed.withLock { $0.count } == 1)
    #expect(await backend.currentStatus.requests == [:])  // steering, not a request
  }
}

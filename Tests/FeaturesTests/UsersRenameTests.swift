import Features
import StateKit
import StateKitTesting
import Testing

/// The seed's rollback: a rename shows at once, and one the server fails rolls back to the
/// name before it, with the error shown, unless a later rename of the user superseded it.
@StateActor
@Suite struct UsersRenameTests {
  let clock = TestClock()
  let failure = "Could not rename the user. Please try again."

  /// No retries, so a failing call answers after one latency of 50 ms.
  func feature(_ backend: Backend) -> UsersFeature {
    UsersFeature(
      backend: backend, clock: clock, wallClock: fixedWallClock,
      backoff: Backoff(base: .milliseconds(200), retries: 0))
  }

  func loaded(_ users: [User]) -> UsersFeature.State {
    let list = IdentifiedArray(users)
    return UsersFeature.State(load: freshLoad, source: .network, users: list, results: list)
  }

  func renamed(_ user: User, _ name: String, version: Int) -> User {
    var copy = user
    copy.name = name
    copy.version = version
    return copy
  }

  @Test func aRenameTheServerFailsRollsBackAndShowsTheError() async {
    let all = await sampleUsers()
    let backend = testBackend(clock: clock, failRate: 1)
    let store = TestStore(feature: feature(backend), initialState: loaded(all))
    let before = all[41].name
    await store.send(.rename(id: 42, name: "Quentin New")) {
      $0.users[id: 42]?.name = "Quentin New"
      $0.results[id: 42]?.name = "Quentin New"
      $0.edits = [
        UserEdit(
          id: 42, name: "Quentin New", baseVersion: 1, previousName: before, status: .sending)
      ]
    }
    await clock.advance(by: .milliseconds(50))
    await store.receive(
      .internal(
        .renameRefused(id: 42, name: "Quentin New", baseVersion: 1, message: failure))
    ) {
      $0.users[id: 42]?.name = before
      $0.results[id: 42]?.name = before
      $0.edits = []
      $0.renameError = self.failure
    }
    #expect(store.state.users == IdentifiedArray(all))  // only the name moved, and back
    await store.finish()
  }

  @Test func aRenameTheServerAcceptsKeepsTheNewName() async {
    let all = await sampleUsers()
    let store = TestStore(
      feature: feature(testBackend(clock: clock)), initialState: loaded(all))
    await store.send(.rename(id: 42, name: "Quentin New")) {
      $0.users[id: 42]?.name = "Quentin New"
      $0.results[id: 42]?.name = "Quentin New"
      $0.edits = [
        UserEdit(
          id: 42, name: "Quentin New", baseVersion: 1, previousName: all[41].name,
          status: .sending)
      ]
    }
    await clock.advance(by: .milliseconds(50))
    let confirmed = renamed(all[41], "Quentin New", version: 2)
    await store.receive(
      .internal(.renamed(id: 42, name: "Quentin New", baseVersion: 1, user: confirmed))
    ) {
      $0.users[id: 42] = confirmed
      $0.results[id: 42] = confirmed
      $0.edits = []
    }
    await store.finish()
  }

  @Test func aFailedRenameSupersededByALaterOneKeepsTheLaterOne() async {
    let all = await sampleUsers()
    let backend = testBackend(clock: clock, failRate: 1)
    let store = TestStore(feature: feature(backend), initialState: loaded(all))
    let before = all[41].name
    await store.send(.rename(id: 42, name: "Quentin First")) {
      $0.users[id: 42]?.name = "Quentin First"
      $0.results[id: 42]?.name = "Quentin First"
      $0.edits = [
        UserEdit(
          id: 42, name: "Quentin First", baseVersion: 1, previousName: before, status: .sending)
      ]
    }
    // Failures are drawn as calls arrive: the first has drawn its failure, the second will not.
    await backend.setFailRate(0)
    await store.send(.rename(id: 42, name: "Quentin Second")) {
      $0.users[id: 42]?.name = "Quentin Second"
      $0.results[id: 42]?.name = "Quentin Second"
      $0.edits[id: 42]?.name = "Quentin Second"
    }
    await clock.advance(by: .milliseconds(50))
    // The first fails; the second, waiting for its reply, is sent instead of a rollback.
    await store.receive(
      .internal(
        .renameRefused(id: 42, name: "Quentin First", baseVersion: 1, message: failure)))
    await clock.advance(by: .milliseconds(50))
    let confirmed = renamed(all[41], "Quentin Second", version: 2)
    await store.receive(
      .internal(.renamed(id: 42, name: "Quentin Second", baseVersion: 1, user: confirmed))
    ) {
      $0.users[id: 42] = confirmed
      $0.results[id: 42] = confirmed
      $0.edits = []
    }
    await store.finish()
  }
}

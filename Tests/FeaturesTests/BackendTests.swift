import Features
import StateKit
import Synchronization
import Testing

/// The simulated backend with no latency: every call answers at once, so these tests need no
/// clock at all.
func instantBackend(seed: UInt64 = 1, failRate: Double = 0) -> Backend {
  Backend(seed: seed, latencyMs: 0, failRate: failRate, clock: ContinuousClock())
}

/// The outcome of `count` calls: true for each that failed.
func failurePattern(_ backend: Backend, count: Int) async -> [Bool] {
  var pattern: [Bool] = []
  for _ in 0..<count {
    do {
      _ = try await backend.listUsers()
      pattern.append(false)
    } catch {
      pattern.append(true)
    }
  }
  return pattern
}

@Suite struct BackendTests {
  @Test func theSameSeedFailsTheSameCalls() async {
    let first = await failurePattern(instantBackend(seed: 42, failRate: 0.5), count: 64)
    let second = await failurePattern(instantBackend(seed: 42, failRate: 0.5), count: 64)
    let other = await failurePattern(instantBackend(seed: 43, failRate: 0.5), count: 64)
    #expect(first == second)
    #expect(first != other)
    // Roughly half fail: the rate is honoured, not just the determinism.
    #expect((16...48).contains(first.filter { $0 }.count))
  }

  @Test func splitMix64MatchesTheReferenceSequence() {
    // First outputs of the reference C implementation (Vigna) for seed 1234567.
    var random = SplitMix64(seed: 1_234_567)
    #expect(random.next() == 6_457_827_717_110_365_317)
    #expect(random.next() == 3_203_168_211_198_807_973)
  }

  @Test func aFailRateOfZeroNeverFailsAndOneAlwaysFails() async {
    #expect(await failurePattern(instantBackend(failRate: 0), count: 20).allSatisfy { !$0 })
    #expect(await failurePattern(instantBackend(failRate: 1), count: 20).allSatisfy { $0 })
  }

  @Test func offlineCallsFailAtOnceAndAreNotCounted() async {
    let backend = instantBackend()
    await backend.setOnline(false)
    await #expect(throws: BackendError.offline) { try await backend.listUsers() }
    #expect(await backend.currentStatus.requests == [:])
    await backend.setOnline(true)
    _ = try? await backend.listUsers()
    #expect(await backend.currentStatus.requests == ["listUsers": 1])
  }

  @Test func fiftyDeterministicUsersWithUniqueNames() async throws {
    let users = try await instantBackend().listUsers()
    #expect(users.count == 50)
    #expect(users.map(\.id) == Array(1...50))
    #expect(Set(users.map(\.name)).count == 50)
    #expect(try await instantBackend(seed: 99).listUsers() == users)
  }

  @Test func searchMatchesNameOrEmailIgnoringCase() async throws {
    let backend = instantBackend()
    let found = try await backend.searchUsers(query: "CARLA")
    #expect(!found.isEmpty)
    #expect(found.allSatisfy { $0.name.hasPrefix("Carla") })
    #expect(try await backend.searchUsers(query: "@example.com").count == 50)
    #expect(await backend.currentStatus.requests["searchUsers"] == 2)
  }

  @Test func save10TakesTenPercentOffEveryPriceAndOtherCodesFail() async throws {
    let backend = instantBackend()
    let items = [
      CartItem(id: "a", name: "A", price: 1000, quantity: 2),
      CartItem(id: "b", name: "B", price: 995),
    ]
    let repriced = try await backend.applyCoupon(code: "save10", items: items)
    #expect(repriced.map(\.price) == [900, 896])
    #expect(repriced.map(\.quantity) == [2, 1])
    await #expect(throws: BackendError.invalidCoupon) {
      try await backend.applyCoupon(code: "FREE", items: items)
    }
  }

  @Test func aRemoteEditMakesTheNextUploadFromTheOldRevisionAConflict() async throws {
    let backend = instantBackend()
    let created = try await backend.uploadNote(
      NoteUpload(id: "note-1", serverId: nil, text: "draft", baseRevision: nil))
    #expect(created.revision == 1)
    #expect(await backend.remoteEdit(noteId: "note-1", text: "theirs"))
    await #expect(throws: BackendError.conflict(serverText: "theirs", revision: 2)) {
      try await backend.uploadNote(
        NoteUpload(id: "note-1", serverId: created.serverId, text: "mine", baseRevision: 1))
    }
    let resolved = try await backend.uploadNote(
      NoteUpload(id: "note-1", serverId: created.serverId, text: "mine", baseRevision: 2))
    #expect(resolved.revision == 3)
    #expect(await !backend.remoteEdit(noteId: "no-such-note", text: "x"))
  }

  @Test func aRetriedUploadIsRecognisedByItsIdempotencyKey() async throws {
    let backend = instantBackend()
    let upload = NoteUpload(
      id: "note-1", serverId: nil, text: "draft", baseRevision: nil, idempotencyKey: "k1")
    let first = try await backend.uploadNote(upload)
    #expect(try await backend.uploadNote(upload) == first)
    // Edited after the lost confirmation: an update of the copy the first upload made.
    var edited = upload
    edited.text = "draft, edited"
    let update = try await backend.uploadNote(edited)
    #expect(update.serverId == first.serverId)
    #expect(update.revision == first.revision + 1)
    // Without a key, the same upload is a new note.
    let other = try await backend.uploadNote(
      NoteUpload(id: "note-1", serverId: nil, text: "draft", baseRevision: nil))
    #expect(other.serverId != first.serverId)
  }

  @StateActor
  @Test func observersSeeARequestBeforeItsReply() async throws {
    let backend = instantBackend()
    let seen = Mutex<[[String: Int]]>([])
    backend.observe { status in
      seen.withLock { $0.append(status.requests) }
      return true
    }
    _ = try await backend.listUsers()
    #expect(seen.withLock { $0 } == [["listUsers": 1]])
    await backend.setLatency(ms: 5)
    #expect(seen.withLock { $0.count } == 2)
  }
}

import StateKit
import Synchronization

/// The simulated server every reference feature talks to: users, coupons, profiles and notes,
/// with latency on an injected clock and failures drawn from a seeded generator. Users are also
/// served by a fallback endpoint (a read replica) with its own online and failure switches.
///
/// Deterministic by construction: the failure of each call is drawn when the call arrives, so
/// the same seed and the same order of calls give the same outcomes, and latency passes on the
/// injected clock (a test clock in tests, so a 50 ms round trip takes no real time).
///
/// ```swift
/// let backend = Backend(seed: 7, latencyMs: 50, clock: ContinuousClock())
/// let users = try await backend.listUsers()  // 50 users, after 50 ms
/// ```
public actor Backend {
  /// Called with the new status after every change (settings or request counts), on the state
  /// actor where stores live; returns false once the observer is gone, to be dropped.
  public typealias Observer = @StateActor @Sendable (BackendStatus) -> Bool
  /// Called with a user's new server copy after an edit someone else made (`remoteUserEdit`),
  /// on the state actor; returns false once the observer is gone, to be dropped. This is the
  /// server's push channel: a client's own renames are answered, not pushed back to it.
  public typealias UserObserver = @StateActor @Sendable (User) -> Bool

  private let clock: any Clock<Duration>
  private var random: SplitMix64
  private var status: BackendStatus
  /// Made on first use: building the 50 names would slow every start, and no request reaches
  /// the backend before the first answer.
  private lazy var users = SampleUsers.make()
  private var savedProfileName = ""
  private var notes = NoteServer()
  /// Behind a lock rather than actor isolation so that `observe` can be synchronous: a store
  /// registered before the first request misses no count.
  private let observers = Mutex<[(id: Int, observer: Observer)]>([])
  /// Behind a lock for the same reason: a users store subscribes as it is made.
  private let userObservers = Mutex<[(id: Int, observer: UserObserver)]>([])

  /// The status this backend started with (its command-line settings), known without
  /// awaiting the actor.
  public nonisolated let initialStatus: BackendStatus

  /// A backend with the given failure seed, latency and failure rate; latency passes on
  /// `clock`. The fallback endpoint starts online with `fallbackFailRate`, by default the same
  /// rate as the primary (one flaky network); each has its own switches afterwards.
  public init(
    seed: UInt64 = Backend.defaultSeed, latencyMs: Int = 50, failRate: Double = 0,
    fallbackFailRate: Double? = nil, clock: any Clock<Duration>
  ) {
    self.clock = clock
    random = SplitMix64(seed: seed)
    let rate = min(1, max(0, failRate))
    status = BackendStatus(
      online: true, latencyMs: max(0, latencyMs), failRate: rate,
      fallback: FallbackStatus(
        online: true, failRate: fallbackFailRate.map { min(1, max(0, $0)) } ?? rate))
    initialStatus = status
  }

  /// The seed used when none is given, so that two runs without `--seed` behave the same.
  public static let defaultSeed: UInt64 = 20_261_129

  // MARK: Steering (the `backend` store's actions); not requests, so not counted.

  /// The settings and request counts now.
  public var currentStatus: BackendStatus { status }

  /// Calls `observer` with the status after every change from now on, until it returns false.
  public nonisolated func observe(_ observer: @escaping Observer) {
    observers.withLock { list in list.append(((list.last?.id ?? 0) + 1, observer)) }
  }

  /// Calls `observer` with each user that someone else edits (`remoteUserEdit`) from now on,
  /// until it returns false.
  public nonisolated func observeUsers(_ observer: @escaping UserObserver) {
    userObservers.withLock { list in list.append(((list.last?.id ?? 0) + 1, observer)) }
  }

  /// Takes the primary endpoint offline (every call to it fails at once with `.offline`) or
  /// back online. The fallback endpoint has its own switch.
  public func setOnline(_ online: Bool) async {
    status.online = online
    await publish()
  }

  /// Sets the time each reply takes, in milliseconds (negative counts as 0).
  public func setLatency(ms: Int) async {
    status.latencyMs = max(0, ms)
    await publish()
  }

  /// Sets the share of calls that fail with `.network`, clamped to 0...1.
  public func setFailRate(_ rate: Double) async {
    status.failRate = min(1, max(0, rate))
    await publish()
  }

  /// Takes the fallback endpoint offline or back online.
  public func setFallbackOnline(_ online: Bool) async {
    status.fallback.online = online
    await publish()
  }

  /// Sets the share of the fallback endpoint's calls that fail with `.network`, clamped to
  /// 0...1.
  public func setFallbackFailRate(_ rate: Double) async {
    status.fallback.failRate = min(1, max(0, rate))
    await publish()
  }

  /// Renames a user on the server behind the client's back (another device's edit): the
  /// user's version goes up by one and the new copy is pushed to every user observer before
  /// this returns. Returns nil for an unknown user.
  @discardableResult
  public func remoteUserEdit(id: Int, name: String) async -> User? {
    guard let index = users.firstIndex(where: { $0.id == id }) else { return nil }
    users[index].name = name
    users[index].version = users[index].version.saturatingAdding(1)
    let user = users[index]
    for (id, observer) in userObservers.withLock({ $0 }) where await !observer(user) {
      userObservers.withLock { list in list.removeAll { $0.id == id } }
    }
    return user
  }

  /// Changes the server's copy of a note behind the client's back, to provoke a conflict.
  /// `noteId` is the client's note id or its `serverId`. Returns false for an unknown note.
  @discardableResult
  public func remoteEdit(noteId: String, text: String) -> Bool {
    notes.edit(noteId: noteId, text: text)
  }

  // MARK: Endpoints

  /// Every user, in id order.
  public func listUsers() async throws -> [User] {
    try await call("listUsers") { users }
  }

  /// Every user, in id order, from the fallback endpoint (counted as `listUsersFallback`): the
  /// same data as the primary, reached through its own online and failure switches.
  public func listUsersFromFallback() async throws -> [User] {
    try await call("listUsersFallback", endpoint: .fallback) { users }
  }

  /// Renames user `id` if the server's copy is still at `baseVersion`, and returns the new
  /// copy (its version one higher). Refuses with `.conflict` (the server's name and version)
  /// when someone else changed the user since, so an edit never overwrites one it has not
  /// seen; `.notFound` when there is no such user.
  public func renameUser(id: Int, name: String, baseVersion: Int) async throws -> User {
    try await call("renameUser") { () throws(BackendError) in
      guard let index = users.firstIndex(where: { $0.id == id }) else {
        throw BackendError.notFound
      }
      guard users[index].version == baseVersion else {
        throw BackendError.conflict(serverText: users[index].name, revision: users[index].version)
      }
      users[index].name = name
      users[index].version = users[index].version.saturatingAdding(1)
      return users[index]
    }
  }

  /// Users whose name or email contains `query`, case-insensitively.
  public func searchUsers(query: String) async throws -> [User] {
    try await call("searchUsers") { users.filter { $0.matches(query) } }
  }

  /// Deletes a user; `.notFound` if there is none with `id`.
  public func deleteUser(id: Int) async throws {
    try await call("deleteUser") { () throws(BackendError) in
      guard let index = users.firstIndex(where: { $0.id == id }) else {
        throw BackendError.notFound
      }
      users.remove(at: index)
    }
  }

  /// Applies a coupon to the cart's items and returns them repriced. `SAVE10` (any case) takes
  /// 10% off every price, rounded to the nearest cent; every other code is refused.
  public func applyCoupon(code: String, items: [CartItem]) async throws -> [CartItem] {
    try await call("applyCoupon") { () throws(BackendError) in
      guard code.uppercased() == "SAVE10" else { throw BackendError.invalidCoupon }
      return items.map { item in
        var discounted = item
        // 90% rounded, computed as 9 * (p / 10) + (9 * (p % 10) + 5) / 10 so that no price,
        // however large, overflows.
        discounted.price = item.price / 10 * 9 + (item.price % 10 * 9 + 5) / 10
        return discounted
      }
    }
  }

  /// Saves the profile's display name and returns it as stored.
  public func saveProfile(name: String) async throws -> String {
    try await call("saveProfile") {
      savedProfileName = name
      return name
    }
  }

  /// Creates or updates the server copy of a note. Refuses with `.conflict` when the server's
  /// copy changed since `upload.baseRevision`, so a client never overwrites it unknowingly.
  public func uploadNote(_ upload: NoteUpload) async throws -> NoteReceipt {
    try await call("uploadNote") { () throws(BackendError) in try notes.upload(upload) }
  }

  /// Deletes the server copy of a note; deleting a missing note succeeds.
  public func deleteNote(serverId: String) async throws {
    try await call("deleteNote") { notes.delete(serverId: serverId) }
  }

  // MARK: Transport

  /// Which switches a call goes through.
  private enum Endpoint { case primary, fallback }

  /// One round trip: refused at once when its endpoint is offline; otherwise counted, its
  /// failure drawn and its work done on arrival (so outcomes follow arrival order), then the
  /// reply takes `latencyMs` on the clock. Cancellation during the wait throws
  /// `CancellationError`.
  private func call<T: Sendable>(
    _ name: String, endpoint: Endpoint = .primary, _ work: () throws(BackendError) -> T
  ) async throws -> T {
    let (online, failRate) =
      endpoint == .primary
      ? (status.online, status.failRate) : (status.fallback.online, status.fallback.failRate)
    guard online else { throw BackendError.offline }
    status.requests[name, default: 0] += 1
    let failed = random.nextDouble() < failRate
    let outcome: Result<T, BackendError>
    if failed {
      outcome = .failure(.network)
    } else {
      do throws(BackendError) { outcome = .success(try work()) } catch { outcome = .failure(error) }
    }
    let latency = status.latencyMs
    await publish()
    if latency > 0 { try await clock.sleep(for: .milliseconds(latency)) }
    return try outcome.get()
  }

  /// Hands the status to every observer on the state actor, and waits for them: by the time a
  /// request's reply is on its way, the `backend` store already counts it.
  private func publish() async {
    let current = status
    for (id, observer) in observers.withLock({ $0 }) where await !observer(current) {
      observers.withLock { list in list.removeAll { $0.id == id } }
    }
  }
}

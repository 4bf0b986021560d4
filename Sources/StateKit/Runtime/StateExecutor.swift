import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The serial executor behind ``StateActor``: it runs the actor's jobs one at a time, in the
/// order they were enqueued, on whichever thread drives it.
///
/// Two drivers, never both at once:
/// - **A private serial dispatch queue** (the default): library use, `swift test`, an
///   application that awaits `Server.run()`. Jobs run on a libdispatch worker.
/// - **A thread's own loop**, once it calls ``takeOver()``: the server's main thread, which
///   waits in `poll(2)` on stdin and on ``wakeDescriptor`` and runs the jobs itself
///   (``runJobs()``), so a request and its answer wake one thread and hand nothing over.
///   A job enqueued from another thread (an effect's continuation, the writer's room, a
///   signal) writes one byte to a pipe the loop polls; one enqueued by the loop thread
///   itself writes nothing, because the loop runs every job before it waits again.
///
/// Public APIs only (SE-0392's `SerialExecutor`, `UnownedJob.runSynchronously(on:)`): the
/// main actor could be run on such a thread only through libdispatch's private main-queue
/// hooks or Swift's SPI custom main executor (docs/architecture.md, "The stores run on a
/// global actor").
public final class StateExecutor: SerialExecutor {
  /// The executor of ``StateActor``.
  public static let shared = StateExecutor()

  private struct State {
    var jobs: [UnownedJob] = []
    /// A byte is in the wake pipe, or the loop is running jobs and will look again: no
    /// other thread needs to write one.
    var wakePending = false
    /// A drain is queued or running on the dispatch queue.
    var queueDraining = false
  }

  private let state = Mutex(State())
  /// `pthread_self()` of the thread that drives the executor; 0 while the queue does. Read
  /// without the lock by ``enqueue(_:)`` and the isolation checks; written once.
  private let driver = Atomic<UInt>(0)
  /// Made at its first use (a job enqueued while no thread drives the executor): the server,
  /// whose main thread takes over before anything is enqueued, never makes it.
  private static let queue = {
    let queue = DispatchQueue(label: "stateserver.state")
    queue.setSpecific(key: onQueue, value: true)
    return queue
  }()
  private static let onQueue = DispatchSpecificKey<Bool>()
  /// The wake pipe's ends (-1 until ``takeOver()``), stored before the driver is.
  private let wakeReader = Atomic<Int32>(-1)
  private let wakeWriter = Atomic<Int32>(-1)

  private init() {}

  private static var currentThread: UInt { UInt(bitPattern: Int(bitPattern: pthread_self())) }

  public func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let driver = driver.load(ordering: .acquiring)
    let onDriver = driver != 0 && driver == Self.currentThread
    enum Wake { case none, pipe, queue }
    let wake = state.withLock { state -> Wake in
      state.jobs.append(job)
      if driver != 0 {
        if onDriver || state.wakePending { return .none }
        state.wakePending = true
        return .pipe
      }
      if state.queueDraining { return .none }
      state.queueDraining = true
      return .queue
    }
    switch wake {
    case .none: break
    case .pipe:
      // Never full: at most one byte waits per wake-up the loop has not taken.
      var byte: UInt8 = 1
      _ = write(wakeWriter.load(ordering: .acquiring), &byte, 1)
    case .queue: Self.queue.async { self.drainOnQueue() }
    }
  }

  /// The queue's drain: runs jobs until none is left, or until a thread took over (the rest
  /// is that thread's; it waits in ``takeOver()`` until this returns).
  private func drainOnQueue() {
    let me = asUnownedSerialExecutor()
    while true {
      let batch = state.withLock { state -> [UnownedJob] in
        if driver.load(ordering: .acquiring) != 0 || state.jobs.isEmpty {
          state.queueDraining = false
          return []
        }
        defer { state.jobs = [] }
        return state.jobs
      }
      if batch.isEmpty { return }
      for job in batch { job.runSynchronously(on: me) }
    }
  }

  // MARK: The loop's side

  /// Makes the calling thread the executor's driver for good: from now on the actor's jobs
  /// run only where this thread calls ``runJobs()``, which its loop must do before each wait,
  /// and it is isolated to ``StateActor`` (``StateActor/assumeIsolated(_:file:line:)``).
  /// Returns once a drain the queue had begun has finished. Calling it again on the same
  /// thread does nothing; on another thread it stops the process.
  package func takeOver() {
    let me = Self.currentThread
    if driver.load(ordering: .acquiring) == me { return }
    var ends: [Int32] = [-1, -1]
    // Without a pipe (out of descriptors) no thread could wake the loop.
    precondition(pipe(&ends) == 0, "stateserver: no pipe for the state actor's wake-ups")
    for end in ends {
      _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
      _ = fcntl(end, F_SETFD, FD_CLOEXEC)
    }
    wakeReader.store(ends[0], ordering: .releasing)
    wakeWriter.store(ends[1], ordering: .releasing)
    let (exchanged, _) = driver.compareExchange(
      expected: 0, desired: me, ordering: .acquiringAndReleasing)
    precondition(exchanged, "stateserver: the state actor is already driven by another thread")
    // The queue's drain sees the driver at its next batch and stops: wait for it, so that
    // no job of this actor runs anywhere else from here on.
    let draining = state.withLock { $0.queueDraining }
    if draining { Self.queue.sync {} }
  }

  /// What the driving loop polls: readable when another thread enqueued a job. Read it (it
  /// is non-blocking) before ``runJobs()``.
  package var wakeDescriptor: Int32 { wakeReader.load(ordering: .acquiring) }

  /// Runs every waiting job, and those they enqueue, on the driving thread. Returns when none
  /// is left; a job enqueued later by another thread writes to ``wakeDescriptor``.
  package func runJobs() {
    let me = asUnownedSerialExecutor()
    while true {
      let batch = state.withLock { state -> [UnownedJob] in
        // Cleared only when nothing is left: until then this loop looks again anyway, so an
        // enqueue meanwhile need not write.
        if state.jobs.isEmpty { state.wakePending = false }
        defer { state.jobs = [] }
        return state.jobs
      }
      if batch.isEmpty { return }
      for job in batch { job.runSynchronously(on: me) }
    }
  }

  // MARK: Isolation checks (assumeIsolated, preconditionIsolated, isolated deinit)

  /// Whether the calling code runs on the driving thread, or in the queue's drain before a
  /// thread took over: outside a job, the only places where the actor's code runs.
  public func isIsolatingCurrentContext() -> Bool? {
    let driver = driver.load(ordering: .acquiring)
    if driver != 0 { return driver == Self.currentThread }
    return DispatchQueue.getSpecific(key: Self.onQueue) == true
  }

  public func checkIsolated() {
    guard isIsolatingCurrentContext() == true else {
      preconditionFailure(
        "Not isolated to StateActor: this code must run on the state actor (a @StateActor "
          + "function or task, or the thread that drives it)")
    }
  }
}

import Synchronization
#if canImport(Glibc)
  import Glibc
#endif

/// (c): a serial executor driven by the main thread's own poll loop. `enqueue` from another
/// thread writes an eventfd the loop polls beside stdin; from the loop thread it only queues
/// (the loop drains before it waits again).
final class LoopExecutor: SerialExecutor {
  struct State: ~Copyable {
    var jobs: [UnownedJob] = []
    var wakePending = false
  }
  let state = Mutex(State())
  let wake: Int32
  let wakeWriter: Int32
  init() {
    var ends: [Int32] = [-1, -1]
    _ = pipe(&ends)
    for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
    (wake, wakeWriter) = (ends[0], ends[1])
  }
  let loopThread = Atomic<UInt>(0)

  var onLoopThread: Bool { loopThread.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self())) }

  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    let local = onLoopThread
    let signal = state.withLock { state in
      state.jobs.append(job)
      if local || state.wakePending { return false }
      state.wakePending = true
      return true
    }
    if signal {
      var one: UInt8 = 1
      _ = write(wakeWriter, &one, 1)
    }
  }

  /// Runs every queued job (and those they queue) on the calling (loop) thread.
  func drain() {
    while true {
      let batch = state.withLock { state in
        let jobs = state.jobs
        state.jobs = []
        state.wakePending = false
        return jobs
      }
      if batch.isEmpty { return }
      let me = asUnownedSerialExecutor()
      for job in batch { job.runSynchronously(on: me) }
    }
  }

  func checkIsolated() {
    precondition(onLoopThread, "not on the loop thread")
  }
}

@globalActor actor LoopActor {
  static let shared = LoopActor()
  static let executor = LoopExecutor()
  nonisolated var unownedExecutor: UnownedSerialExecutor { Self.executor.asUnownedSerialExecutor() }

  static func assumeIsolated<T: Sendable>(_ operation: @LoopActor () throws -> T) rethrows -> T {
    typealias Plain = () throws -> T
    shared.preconditionIsolated()
    return try withoutActuallyEscaping(operation) { fn in
      try unsafeBitCast(fn, to: Plain.self)()
    }
  }
}

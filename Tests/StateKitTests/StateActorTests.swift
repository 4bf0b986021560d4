import Dispatch
import StateKit
import Testing

/// What a job of the state actor records: the order jobs ran in, and whether two ever ran at
/// once (two threads running its jobs would both be inside `enter`).
@StateActor
final class JobLog {
  var order: [Int] = []
  var inside = false
  var overlapped = false

  func enter(_ number: Int) {
    if inside { overlapped = true }
    inside = true
    order.append(number)
    inside = false
  }
}

/// StateActor without a driving thread, as `swift test` and library use run it: its executor's
/// fallback queue. (The server's main-thread loop is covered by every server test.)
@Suite struct StateActorTests {
  @Test func tasksStartedFromOffTheActorRunInTheOrderTheyWereStarted() async {
    let log = JobLog()
    var tasks: [Task<Void, Never>] = []
    for number in 0..<200 {
      tasks.append(Task { @StateActor in log.enter(number) })
    }
    for task in tasks { await task.value }
    #expect(await log.order == Array(0..<200))
  }

  @Test func jobsEnqueuedFromManyThreadsNeverRunAtOnce() async {
    let log = JobLog()
    await withTaskGroup(of: Void.self) { group in
      for number in 0..<2_000 {
        group.addTask { await log.enter(number) }
      }
    }
    #expect(await log.order.count == 2_000)
    #expect(await log.overlapped == false)
  }

  @StateActor @Test func theActorsOwnCodeIsIsolatedAndAnotherThreadIsNot() async {
    #expect(StateExecutor.shared.isIsolatingCurrentContext() == true)
    #expect(StateActor.assumeIsolated { JobLog().order.isEmpty })
    let elsewhere = await withCheckedContinuation { continuation in
      DispatchQueue.global().async {
        continuation.resume(returning: StateExecutor.shared.isIsolatingCurrentContext())
      }
    }
    #expect(elsewhere == false)
  }
}

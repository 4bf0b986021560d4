import Foundation
import Testing

@testable import StateServer

/// The server joins paths without Foundation (`FilePath`), as `NSString` did.
@Suite struct FilePathTests {
  // Expected values, not NSString's own: its deletingLastPathComponent traps on some of
  // these inputs in this toolchain's Foundation.
  @Test(arguments: [
    ("/a/b", "/a"), ("b", ""), ("/a", "/"), ("/", "/"), ("a/b/", "a"), ("./x.sock", "."),
    ("/run/user/1000/s", "/run/user/1000"),
  ])
  func directoryIsThePathWithoutItsLastComponent(path: String, directory: String) {
    #expect(FilePath.directory(of: path) == directory)
  }

  @Test(arguments: [
    ("/x", "y"), ("/x/", "y"), ("/", "y"), ("x", "y.sock"), ("/tmp/", "stateserver-0"),
    ("/home/u", ".local/state/stateserver"),
  ])
  func joinIsNSStringsAppendingPathComponent(base: String, component: String) {
    #expect(
      FilePath.join(base, component) == (base as NSString).appendingPathComponent(component))
  }
}

/// `Condition` and `OSThread` stand in for `NSCondition` and `Thread`.
@Suite struct ConditionTests {
  @Test func aPastDeadlineTimesOut() {
    let condition = Condition()
    condition.lock()
    #expect(!condition.wait(until: Date(timeIntervalSinceNow: -1)))
    condition.unlock()
  }

  @Test func aThreadWakesAWaiter() {
    let condition = Condition()
    let done = Flag()
    OSThread(name: "test.condition") {
      condition.lock()
      done.value = true
      condition.broadcast()
      condition.unlock()
    }.start()
    // A generous bound only for failure: the thread runs at once on any machine.
    let deadline = Date(timeIntervalSinceNow: 30)
    condition.lock()
    while !done.value, condition.wait(until: deadline) {}
    let woke = done.value
    condition.unlock()
    #expect(woke)
  }
}

// Safety: `value` is read and written only with the test's `Condition` locked.
private final class Flag: @unchecked Sendable {
  var value = false
}

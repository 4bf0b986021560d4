import Dispatch
import JSON
import Synchronization
import Testing

@testable import StateServer

#if canImport(Glibc)
  import Glibc
#endif

/// The committer's direct writes (``StdoutWriter/writeDirectly(_:estimatedBytes:)``): any commit
/// the pipe takes goes out from the committer's thread, and none ever waits on the pipe.
@Suite struct StdoutWriterTests {
  /// A pipe; both ends are closed with it.
  final class Pipe {
    let readEnd: Int32
    let writeEnd: Int32

    init?() {
      var fds: [Int32] = [0, 0]
      guard pipe(&fds) == 0 else { return nil }
      (readEnd, writeEnd) = (fds[0], fds[1])
    }

    deinit {
      close(readEnd)
      close(writeEnd)
    }

    var capacity: Int { Int(fcntl(writeEnd, 1032 /* F_GETPIPE_SZ */)) }

    var unread: Int {
      var count: Int32 = 0
      return ioctl(readEnd, UInt(FIONREAD), &count) == 0 ? Int(count) : -1
    }

    /// Reads `count` bytes; fewer if none come for 30 s (a failure bound, not a wait).
    func read(_ count: Int) -> [UInt8] {
      var bytes = [UInt8](repeating: 0, count: count)
      var done = 0
      while done < count {
        var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 30_000) == 1 else { break }
        let got = bytes.withUnsafeMutableBytes { buffer in
          guard let base = buffer.baseAddress else { return -1 }
          return Glibc.read(readEnd, base + done, count - done)
        }
        guard got > 0 else { break }
        done += got
      }
      return Array(bytes[..<done])
    }
  }

  /// Whether a direct write returned, and what it returned.
  final class Outcome: Sendable {
    let returned = DispatchSemaphore(value: 0)
    let wrote = Atomic<Bool>(false)
  }

  func dispatched(_ ids: ClosedRange<Int>) -> [Outgoing] {
    ids.map { .dispatched(id: .integer(Int64($0)), store: "counter", version: UInt64($0)) }
  }

  func text(_ lines: [Outgoing]) -> [UInt8] {
    var writer = JSONWriter()
    for line in lines { try? line.write(to: &writer) }
    return writer.withUnsafeBytes { Array($0) }
  }

  func estimate(_ lines: [Outgoing]) -> Int { lines.map(\.estimatedBytes).reduce(0, +) }

  @Test func aCommitThePipeTakesIsWrittenByTheCommitter() throws {
    let pipe = try #require(Pipe())
    let queue = OutputQueue(maxMessages: 4096)
    let writer = StdoutWriter(fd: pipe.writeEnd, queue: queue, log: Log(level: .error))
    // About 20 KiB: a pipelined read's commit, five times the 4 KiB that were once the limit.
    let lines = dispatched(1...300)
    let expected = text(lines)
    #expect(expected.count > 16 << 10)
    #expect(writer.writeDirectly(lines, estimatedBytes: estimate(lines)))
    #expect(pipe.unread == expected.count)
    #expect(pipe.read(expected.count) == expected)
    #expect(queue.takeQueued() == nil)
  }

  @Test func whatAFullPipeCannotTakeIsLeftToTheWriterThreadInOrder() throws {
    let pipe = try #require(Pipe())
    let queue = OutputQueue(maxMessages: 4096)
    let writer = StdoutWriter(fd: pipe.writeEnd, queue: queue, log: Log(level: .error))
    // Three quarters of a page per write fill every page-sized slot of the pipe with a quarter
    // of its bytes to spare: the unread count says the next lines fit, and they do not.
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let filler = [UInt8](repeating: 0x20, count: page * 3 / 4)
    let slots = pipe.capacity / page
    for _ in 0..<slots {
      let written = filler.withUnsafeBytes { write(pipe.writeEnd, $0.baseAddress, $0.count) }
      #expect(written == filler.count)
    }
    #expect(pipe.unread == slots * filler.count)
    let first = dispatched(1...20)
    let second = dispatched(21...40)
    // On another thread, so that a write that waits for a reader fails this test instead of
    // hanging the suite.
    let outcome = Outcome()
    DispatchQueue.global().async { [first] in
      let wrote = writer.writeDirectly(first, estimatedBytes: estimate(first))
      outcome.wrote.store(wrote, ordering: .releasing)
      outcome.returned.signal()
    }
    let returned = outcome.returned.wait(timeout: .now() + 30) == .success
    #expect(returned, "the direct write waited on a full pipe")
    var expected = Array(repeating: filler, count: slots).flatMap { $0 }
    guard returned else {
      _ = pipe.read(expected.count)  // lets the stuck write finish
      outcome.returned.wait()
      return
    }
    let wrote = outcome.wrote.load(ordering: .acquiring)
    #expect(wrote)
    // What comes later queues behind the bytes carried over, never beside them.
    #expect(!writer.writeDirectly(second, estimatedBytes: estimate(second)))
    queue.append(second) { _ in }
    writer.start()
    defer { queue.finish() }
    expected += text(first) + text(second)
    #expect(pipe.read(expected.count) == expected)
  }

  @Test func aCommitLargerThanThePipeIsLeftToTheQueueUnwritten() throws {
    let pipe = try #require(Pipe())
    let queue = OutputQueue(maxMessages: 4096)
    let writer = StdoutWriter(fd: pipe.writeEnd, queue: queue, log: Log(level: .error))
    let lines = dispatched(1...3)
    #expect(!writer.writeDirectly(lines, estimatedBytes: pipe.capacity + 1))
    #expect(pipe.unread == 0)
  }
}

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

  /// `writer.writeDirectly(lines)` on another thread, so that a write that waits for a reader
  /// fails the test (nil, after 30 s) instead of hanging the suite; the pipe, which holds
  /// `unread` bytes, is then read to let the stuck write end.
  func writeDirectly(
    _ lines: [Outgoing], with writer: StdoutWriter, into pipe: Pipe, holding unread: Int
  ) -> Bool? {
    let outcome = Outcome()
    let estimated = estimate(lines)
    DispatchQueue.global().async {
      let wrote = writer.writeDirectly(lines, estimatedBytes: estimated)
      outcome.wrote.store(wrote, ordering: .releasing)
      outcome.returned.signal()
    }
    guard outcome.returned.wait(timeout: .now() + 30) == .success else {
      Issue.record("the direct write waited on a full pipe")
      _ = pipe.read(unread)
      outcome.returned.wait()
      return nil
    }
    return outcome.wrote.load(ordering: .acquiring)
  }

  /// Three quarters of a page per write fill every page-sized slot of `pipe` with a quarter of
  /// its bytes to spare: the unread count says the next lines fit, and they do not. Returns the
  /// bytes written.
  func fillEverySlot(_ pipe: Pipe) -> [UInt8] {
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let filler = [UInt8](repeating: 0x20, count: page * 3 / 4)
    let slots = pipe.capacity / page
    for _ in 0..<slots {
      let written = filler.withUnsafeBytes { write(pipe.writeEnd, $0.baseAddress, $0.count) }
      #expect(written == filler.count)
    }
    #expect(pipe.unread == slots * filler.count)
    return Array(repeating: filler, count: slots).flatMap { $0 }
  }

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
    let filled = fillEverySlot(pipe)
    let first = dispatched(1...20)
    let second = dispatched(21...40)
    guard let wrote = writeDirectly(first, with: writer, into: pipe, holding: filled.count) else {
      return
    }
    #expect(wrote)
    var expected = filled
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

  /// A kernel whose pipes ignore `RWF_NOWAIT`: a lone answer still goes out directly, and still
  /// never waits.
  @Test func withoutWritesThatNeverWaitOnlyAnAnswerThatFitsAFreeSlotGoesDirectly() throws {
    let pipe = try #require(Pipe())
    let queue = OutputQueue(maxMessages: 4096)
    let writer = StdoutWriter(
      fd: pipe.writeEnd, queue: queue, log: Log(level: .error), writesWithoutWaiting: false)
    let answer = dispatched(1...3)
    let expected = text(answer)
    #expect(writer.writeDirectly(answer, estimatedBytes: estimate(answer)))
    #expect(pipe.read(expected.count) == expected)
    // More than a slot's worth could wait: left to the writer thread.
    let large = dispatched(1...300)
    #expect(!writer.writeDirectly(large, estimatedBytes: estimate(large)))
    #expect(pipe.unread == 0)
    // No free slot: left to the writer thread too, nothing written.
    let filled = fillEverySlot(pipe)
    let wrote = writeDirectly(answer, with: writer, into: pipe, holding: filled.count)
    #expect(wrote == false)
    #expect(pipe.unread == filled.count)
  }
}

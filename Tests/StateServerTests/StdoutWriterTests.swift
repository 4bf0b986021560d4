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
    func read(_ count: Int) -> [UInt8] { Self.read(count, from: readEnd) }

    /// ``read(_:)`` from a descriptor, for a thread that may not hold the pipe itself.
    static func read(_ count: Int, from readEnd: Int32) -> [UInt8] {
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

/// A line larger than a chunk (a `store/open` or `state/get` of a large state) streams out while
/// it is encoded: the writer's buffer never holds its whole text.
@Suite struct StdoutWriterStreamingTests {
  /// A `state/get`-like answer of `count` notes: about 110 bytes each.
  func answer(id: Int64, notes count: Int, poisoned: Bool = false) -> Outgoing {
    var notes: [JSON] = (0..<count).map { index in
      ["id": .string("n\(index)"), "text": .string("note \(index)"), "updatedAt": 1_700_000_000]
    }
    if poisoned { notes[count / 2] = ["id": "nan", "weight": .double(.nan)] }
    return .response(id: .integer(id), result: ["notes": .array(notes)], barriers: [])
  }

  /// Reads the pipe's `readEnd` on another thread until `count` bytes came, or none for 30 s
  /// (a failure bound, not a wait): the writer thread fills the pipe as it is read.
  func drain(_ readEnd: Int32, _ count: Int) async -> [UInt8] {
    await withCheckedContinuation { continuation in
      OSThread(name: "test.drain") {
        continuation.resume(returning: StdoutWriterTests.Pipe.read(count, from: readEnd))
      }.start()
    }
  }

  @Test func aLineLargerThanAChunkIsWrittenWithoutBufferingItWhole() async throws {
    let pipe = try #require(StdoutWriterTests.Pipe())
    let queue = OutputQueue(maxMessages: 4096)
    let writer = StdoutWriter(fd: pipe.writeEnd, queue: queue, log: Log(level: .error))
    let lines = [answer(id: 1, notes: 40_000), answer(id: 2, notes: 3)]
    var whole = JSONWriter()
    for line in lines { try line.write(to: &whole) }
    let expected = whole.withUnsafeBytes { Array($0) }
    #expect(expected.count > 8 * StdoutWriter.chunkBytes)
    queue.append(lines) { _ in }
    writer.start()
    defer { queue.finish() }
    let received = await drain(pipe.readEnd, expected.count)
    #expect(received.count == expected.count)
    #expect(received == expected)
    // The buffer grew to a few chunks at most, never to the line's 2.3 MB.
    #expect(writer.largestBuffer.load(ordering: .relaxed) <= 4 * StdoutWriter.chunkBytes)
  }

  /// Bytes written out cannot be taken back: a large line that cannot be written (a NaN in the
  /// state) is checked before any of it goes out, and answered with an error line instead.
  @Test func aLargeLineThatCannotBeWrittenIsAnsweredWithAnErrorNotHalfALine() async throws {
    let pipe = try #require(StdoutWriterTests.Pipe())
    let queue = OutputQueue(maxMessages: 4096)
    let writer = StdoutWriter(fd: pipe.writeEnd, queue: queue, log: Log(level: .error))
    let lines = [answer(id: 7, notes: 20_000, poisoned: true), answer(id: 8, notes: 1)]
    var tail = JSONWriter()
    try lines[1].write(to: &tail)
    queue.append(lines) { _ in }
    writer.start()
    defer { queue.finish() }
    // Two lines come: the error, then the second answer (a failure bound of 30 s per read).
    var received: [UInt8] = []
    while received.filter({ $0 == 0x0A }).count < 2 {
      var poller = pollfd(fd: pipe.readEnd, events: Int16(POLLIN), revents: 0)
      guard poll(&poller, 1, 30_000) == 1 else { break }
      var chunk = [UInt8](repeating: 0, count: 1 << 16)
      let got = chunk.withUnsafeMutableBytes { Glibc.read(pipe.readEnd, $0.baseAddress, $0.count) }
      guard got > 0 else { break }
      received += chunk[..<got]
    }
    let text = String(decoding: received, as: UTF8.self)
    let first = try JSON(parsing: Array(text.split(separator: "\n")[0].utf8))
    #expect(first["id"] == 7)
    #expect(first["error"]?["code"] == -32603)
    #expect(text.split(separator: "\n").count == 2)
    let second = Array(text.split(separator: "\n")[1].utf8) + [0x0A]
    #expect(second == tail.withUnsafeBytes { Array($0) })
  }
}

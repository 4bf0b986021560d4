import Foundation
import Testing

@testable import StateServer

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct StandardErrorWriterTests {
  /// Logging into a full pipe nobody reads: every call returns, the lines past the bound are
  /// dropped and counted, and once the pipe is read again the notice and later lines arrive.
  @Test func logsNeverBlockOnAStderrNobodyReads() throws {
    var fds: [Int32] = [0, 0]
    try #require(pipe(&fds) == 0)
    let (readEnd, writeEnd) = (fds[0], fds[1])
    // Fill the pipe, so the writer thread's first write blocks until the test reads.
    _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) | O_NONBLOCK)
    let filler = [UInt8](repeating: UInt8(ascii: "."), count: 4096)
    var filled = 0
    while true {
      let n = filler.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
      if n <= 0 { break }
      filled += n
    }
    _ = fcntl(writeEnd, F_SETFL, fcntl(writeEnd, F_GETFL) & ~O_NONBLOCK)

    let writer = StandardErrorWriter(fd: writeEnd, limit: 100)
    for index in 0..<25 {
      writer.enqueue(Array("line \(index + 10)\n".utf8), format: .text)  // 8 bytes each
    }
    // Only what fits in 100 bytes was kept: 12 lines; 13 were dropped, and nothing blocked.
    // A thread of its own, not a task: this test blocks its own thread in `flush`, and on a
    // two-core machine other tests may hold every thread of the cooperative pool, so a reading
    // task might never run and the flush would time out.
    let reading = PipeDrain(fd: readEnd)
    #expect(writer.flush(timeout: 30))
    writer.enqueue(Array("after\n".utf8), format: .text)
    #expect(writer.flush(timeout: 30))
    close(writeEnd)
    let received = reading.wait()
    close(readEnd)
    #expect(received.count > filled)
    let text = String(decoding: received.dropFirst(filled), as: UTF8.self)
    let expected =
      (10..<22).map { "line \($0)\n" }.joined()
      + "stateserver: warning: 13 log records dropped: stderr is not being read\nafter\n"
    #expect(text == expected)
  }
}

/// Reads a descriptor to its end on a dedicated thread.
private final class PipeDrain: @unchecked Sendable {
  // Safety: `received` and `done` are touched only with `condition` locked.
  private let condition = NSCondition()
  private var received: [UInt8] = []
  private var done = false

  init(fd: Int32) {
    Thread { [self] in
      var chunk = [UInt8](repeating: 0, count: 1 << 16)
      while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { break }
        condition.lock()
        received += chunk[0..<n]
        condition.unlock()
      }
      condition.lock()
      done = true
      condition.broadcast()
      condition.unlock()
    }.start()
  }

  /// Everything read, once the writing end is closed.
  func wait() -> [UInt8] {
    condition.lock()
    defer { condition.unlock() }
    while !done { condition.wait() }
    return received
  }
}

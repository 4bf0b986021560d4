import Foundation
import Testing

@testable import StateServer

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct StandardErrorWriterTests {
  /// Logging into a full pipe nobody reads: every call returns, the lines past the bound are
  /// dropped and counted, and once the pipe is read again the notice and later lines arrive.
  @Test func logsNeverBlockOnAStderrNobodyReads() async throws {
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
    let reading = Task.detached { () -> [UInt8] in
      var received: [UInt8] = []
      var chunk = [UInt8](repeating: 0, count: 1 << 16)
      while true {
        let n = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
        if n <= 0 { return received }
        received += chunk[0..<n]
      }
    }
    #expect(writer.flush(timeout: 10))
    writer.enqueue(Array("after\n".utf8), format: .text)
    #expect(writer.flush(timeout: 10))
    close(writeEnd)
    let received = await reading.value
    close(readEnd)
    #expect(received.count > filled)
    let text = String(decoding: received.dropFirst(filled), as: UTF8.self)
    let expected =
      (10..<22).map { "line \($0)\n" }.joined()
      + "stateserver: warning: 13 log records dropped: stderr is not being read\nafter\n"
    #expect(text == expected)
  }
}

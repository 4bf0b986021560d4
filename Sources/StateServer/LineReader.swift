import Foundation
import JSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Reads stdin on a thread of its own, in large blocks, and splits it into lines in place:
/// no byte-by-byte reads, no copy of a line before it is parsed.
///
/// `\r\n` endings and blank lines are accepted; the limit applies to a message without its line
/// ending (`\n` or `\r\n`). A line longer than `maxMessageBytes` is never held in memory: once a partial line passes the limit its bytes are dropped as they arrive
/// and the line is reported as ``InboundLine/oversize(bytes:)`` when its newline comes.
/// Before each read the reader waits while the output queue is over its bound, so a client that
/// stops reading stops the server reading too.
final class LineReader: Sendable {
  private let fd: Int32
  private let maxMessageBytes: Int
  private let inbox: Inbox
  private let output: OutputQueue
  /// Called on the reading thread once it stopped reading for good (an attached connection
  /// closes its descriptor only then).
  private let onEnd: (@Sendable () -> Void)?
  private static let blockSize = 64 << 10

  init(
    fd: Int32, maxMessageBytes: Int, inbox: Inbox, output: OutputQueue,
    onEnd: (@Sendable () -> Void)? = nil
  ) {
    self.fd = fd
    self.maxMessageBytes = maxMessageBytes
    self.inbox = inbox
    self.output = output
    self.onEnd = onEnd
  }

  /// Starts the reading thread.
  func start() {
    let thread = Thread { [self] in run() }
    thread.name = "stateserver.stdin"
    thread.start()
  }

  private func run() {
    defer { onEnd?() }
    var buffer = [UInt8](repeating: 0, count: Self.blockSize)
    var start = 0  // first byte of the unconsumed partial line
    var end = 0  // end of the bytes read so far
    var skipped: Int? = nil  // length so far of an oversize line being skipped
    while true {
      output.waitForRoom()
      if end == buffer.count {
        if start > 0 {
          buffer.withUnsafeMutableBytes { raw in
            guard let base = raw.baseAddress else { return }
            memmove(base, base + start, end - start)
          }
          end -= start
          start = 0
        } else {
          // One line fills the buffer: grow up to the limit, past it skip the line.
          buffer.append(contentsOf: repeatElement(0, count: min(buffer.count, maxMessageBytes + 1)))
        }
      }
      let count = buffer.withUnsafeMutableBytes { raw -> Int in
        guard let base = raw.baseAddress else { return 0 }
        while true {
          let n = read(fd, base + end, raw.count - end)
          if n < 0 && errno == EINTR { continue }
          return n
        }
      }
      if count <= 0 {
        var batch: [InboundLine] = []
        buffer.withUnsafeBytes { raw in
          let length = messageLength(raw, start, end)
          if let skipped {
            batch.append(.oversize(bytes: skipped + length))
          } else if length > maxMessageBytes {
            batch.append(.oversize(bytes: length))
          } else if end > start {
            lineEnded(UnsafeRawBufferPointer(rebasing: raw[start..<end]), into: &batch)
          }
        }
        batch.append(.endOfInput)
        inbox.push(batch)
        return
      }
      var batch: [InboundLine] = []
      let scanFrom = end
      end += count
      var keepReading = true
      buffer.withUnsafeBytes { raw in
        guard let base = raw.baseAddress else { return }
        var cursor = scanFrom
        while cursor < end, let hit = memchr(base + cursor, 0x0A, end - cursor) {
          let newline = base.distance(to: UnsafeRawPointer(hit))
          let length = messageLength(raw, start, newline)
          if let skippedSoFar = skipped {
            batch.append(.oversize(bytes: skippedSoFar + length))
            skipped = nil
          } else if length > maxMessageBytes {
            batch.append(.oversize(bytes: length))
          } else {
            lineEnded(UnsafeRawBufferPointer(rebasing: raw[start..<newline]), into: &batch)
          }
          start = newline + 1
          cursor = start
        }
      }
      if start == end {
        start = 0
        end = 0
        if buffer.count > 4 * Self.blockSize {
          buffer = [UInt8](repeating: 0, count: Self.blockSize)
        }
      } else if skipped != nil || end - start > maxMessageBytes + 1 {
        // The partial line is already too long (one byte over may still be the `\r` of a
        // `\r\n` whose `\n` has not arrived): forget its bytes, remember only its length.
        skipped = (skipped ?? 0) + end - start
        start = 0
        end = 0
      }
      if !batch.isEmpty { keepReading = inbox.push(batch) }
      if !keepReading { return }
    }
  }

  /// The length of the message in `raw[start..<end]` (a line without its `\n`): a final `\r` is
  /// part of the line ending, not of the message.
  private func messageLength(_ raw: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> Int {
    end > start && raw[end - 1] == 0x0D ? end - start - 1 : end - start
  }

  /// Turns one line (without its `\n`) into what the connection needs; blank lines vanish.
  private func lineEnded(_ line: UnsafeRawBufferPointer, into batch: inout [InboundLine]) {
    var line = line
    if line.last == 0x0D { line = UnsafeRawBufferPointer(rebasing: line.dropLast()) }
    if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { return }
    do {
      batch.append(.message(try JSON(parsing: line)))
    } catch {
      batch.append(.malformed(error))
    }
  }
}

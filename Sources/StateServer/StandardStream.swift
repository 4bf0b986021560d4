#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Whole writes to stdout or stderr outside the server's own writers (usage text, `codegen`
/// and `replay` output), as `FileHandle.write` did them, without linking Foundation.
public enum StandardStream {
  /// Writes all of `bytes` to `fd`, retrying short writes and interruptions; gives up silently
  /// when the stream is closed (there is no one left to tell).
  public static func writeAll(_ bytes: [UInt8], to fd: Int32) {
    var offset = 0
    while offset < bytes.count {
      let count = bytes.withUnsafeBytes { buffer in
        // Not empty here (offset < count), so the base address exists.
        guard let base = buffer.baseAddress else { return 0 }
        return write(fd, base + offset, buffer.count - offset)
      }
      if count > 0 {
        offset += count
      } else if count < 0 && errno == EINTR {
        continue
      } else {
        return
      }
    }
  }

  /// Writes all of `text`, UTF-8 encoded, to `fd`.
  public static func writeAll(_ text: String, to fd: Int32) { writeAll(Array(text.utf8), to: fd) }
}

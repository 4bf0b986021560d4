import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// One process per state directory: an exclusive `flock` on `stateserver.lock` in it, held
/// for the life of the process (the kernel releases it when the process dies, however it
/// dies, so a crash never leaves a stale lock). The file holds the holder's pid, so a second
/// server can say who holds it.
///
/// Two servers on one directory would each restore the same state and then overwrite each
/// other's acknowledged changes; the second one must not start.
///
/// ```swift
/// let lock = try DirectoryLock(directory: stateDirectory)   // keep it alive
/// ```
public final class DirectoryLock: Sendable {
  public static let fileName = "stateserver.lock"

  private let descriptor: Int32

  /// Why the directory could not be locked, for a person.
  public struct Failure: Error, CustomStringConvertible {
    /// Another process holds the lock (as opposed to: the lock file cannot be used).
    public var isHeld = false
    /// The pid of the process holding the lock, if it could be read.
    public var holder: Int32?
    public var description: String
  }

  /// Takes the lock of `directory` (created if missing), or throws naming the holder.
  public init(directory: String) throws(Failure) {
    let path = FilePath.join(directory, Self.fileName)
    do {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    } catch {
      throw Failure(
        holder: nil, description: "cannot create the state directory \(directory): \(error)")
    }
    let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      throw Failure(
        holder: nil,
        description:
          "cannot open \(path) to lock the state directory: \(String(cString: strerror(errno)))")
    }
    guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
      let reason = errno
      let holder = Self.readPID(fd)
      close(fd)
      guard reason == EWOULDBLOCK else {
        throw Failure(
          holder: nil,
          description: "cannot lock \(path): \(String(cString: strerror(reason)))")
      }
      let who = holder.map { "another stateserver (pid \($0))" } ?? "another stateserver"
      throw Failure(
        isHeld: true, holder: holder,
        description:
          "\(who) is using the state directory \(directory) (lock \(path)); "
          + "stop it, or give this one another --state-dir")
    }
    let text = Array("\(getpid())\n".utf8)
    _ = ftruncate(fd, 0)
    _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    descriptor = fd
  }

  private static func readPID(_ fd: Int32) -> Int32? {
    var buffer = [UInt8](repeating: 0, count: 32)
    let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
    guard count > 0 else { return nil }
    // The holder wrote its pid and a newline: the digits up to the first other byte.
    let digits = buffer[..<count].prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    return Int32(String(decoding: digits, as: UTF8.self))
  }

  deinit {
    close(descriptor)
  }
}

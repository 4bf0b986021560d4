import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The few Unix domain socket calls `--listen` and `stateserver attach` need, with errors as
/// sentences. No TCP anywhere: only `AF_UNIX` stream sockets.
enum UnixSocket {
  /// Why a socket call failed, for a person.
  struct Failure: Error, Sendable {
    var message: String
  }

  /// The longest path a `sockaddr_un` holds (its `sun_path` with a terminating NUL).
  static let maxPathBytes = MemoryLayout.size(ofValue: sockaddr_un().sun_path) - 1

  /// A new stream socket, closed on exec so a child process never inherits it.
  static func make() throws(Failure) -> Int32 {
    #if canImport(Glibc)
      let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    #else
      let fd = socket(AF_UNIX, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw Failure(message: "cannot create a socket: \(errorText())") }
    return fd
  }

  /// Calls `body` with the address of `path`; the path must fit `sun_path`.
  static func withAddress<R>(
    _ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R
  ) throws(Failure) -> R {
    let bytes = Array(path.utf8)
    guard bytes.count <= maxPathBytes else {
      throw Failure(
        message:
          "the socket path '\(path)' is \(bytes.count) bytes long; a Unix socket path holds at most \(maxPathBytes)"
      )
    }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
    }
    return withUnsafePointer(to: &address) { pointer in
      pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        body($0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
  }

  /// Connects to the socket at `path`; returns the connected descriptor.
  static func connect(to path: String) throws(Failure) -> Int32 {
    let fd = try make()
    let result = try withAddress(path) { address, length in
      while true {
        let status = Glibc.connect(fd, address, length)
        if status < 0 && errno == EINTR { continue }
        return status
      }
    }
    guard result == 0 else {
      let reason = errorText()
      close(fd)
      throw Failure(message: "cannot connect to '\(path)': \(reason)")
    }
    return fd
  }

  /// Whether a server answers on `path` (a connection is accepted).
  static func answers(at path: String) -> Bool {
    guard let fd = try? connect(to: path) else { return false }
    close(fd)
    return true
  }

  /// The user id of the process at the other end of a connected socket (`SO_PEERCRED`).
  static func peerUID(_ fd: Int32) -> uid_t? {
    // `struct ucred` needs _GNU_SOURCE, which the Glibc module does not define; its layout is
    // fixed by the kernel ABI: pid, uid, gid, each 32 bits.
    var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
    var length = socklen_t(MemoryLayout.size(ofValue: credentials))
    let status = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length)
    guard status == 0, Int(length) == MemoryLayout.size(ofValue: credentials) else { return nil }
    return credentials.uid
  }

  /// The peer's process id, for the log.
  static func peerPID(_ fd: Int32) -> Int32 {
    var credentials: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)
    var length = socklen_t(MemoryLayout.size(ofValue: credentials))
    guard getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return 0 }
    return credentials.pid
  }

  static func errorText(_ code: Int32 = errno) -> String {
    String(cString: strerror(code))
  }
}

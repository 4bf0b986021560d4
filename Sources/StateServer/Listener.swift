import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The `--listen` socket: binds a Unix domain socket only its owner can reach, accepts on a
/// thread of its own, and hands each connection of the same user to `onAccept`.
///
/// Three locks keep other users out: the directory is the owner's alone (checked by
/// ``ListenAddress``), the socket file is 0600, and a peer whose `SO_PEERCRED` uid differs
/// from ours is closed unanswered and logged (file permissions do not bind root, nor a
/// descriptor passed on by someone who could open the file).
final class Listener: Sendable {
  let path: String
  private let fd: Int32
  private let log: Log

  /// Binds `path`. An existing socket file is replaced only when nothing answers on it; any
  /// other file there is refused.
  init(path: String, log: Log) throws(UnixSocket.Failure) {
    var existing = stat()
    if lstat(path, &existing) == 0 {
      guard existing.st_mode & S_IFMT == S_IFSOCK else {
        throw UnixSocket.Failure(
          message: "refusing to listen on '\(path)': a file that is not a socket is there")
      }
      guard !UnixSocket.answers(at: path) else {
        throw UnixSocket.Failure(
          message: "refusing to listen on '\(path)': another server is answering on it")
      }
      unlink(path)  // a socket left by a process that died: nothing answers on it
    }
    let fd = try UnixSocket.make()
    // The socket file is created 0600: the mask applies to bind(2)'s file, and nothing else
    // creates files at this point of the start (no thread but this one is running yet).
    let previousMask = umask(0o177)
    let bound = try UnixSocket.withAddress(path) { address, length in bind(fd, address, length) }
    umask(previousMask)
    guard bound == 0 else {
      let reason = UnixSocket.errorText()
      close(fd)
      throw UnixSocket.Failure(message: "cannot listen on '\(path)': \(reason)")
    }
    guard listen(fd, 64) == 0 else {
      let reason = UnixSocket.errorText()
      close(fd)
      unlink(path)
      throw UnixSocket.Failure(message: "cannot listen on '\(path)': \(reason)")
    }
    var created = stat()
    _ = stat(path, &created)
    self.path = path
    self.fd = fd
    self.log = log
    SocketFileRemoval.register(path: path, inode: created.st_ino)
  }

  /// Starts accepting; `onAccept` gets each connection of our own user, on the accept thread.
  func start(onAccept: @escaping @Sendable (Int32) -> Void) {
    let thread = OSThread(name: "stateserver.listen") { [self] in run(onAccept) }
    thread.start()
  }

  private func run(_ onAccept: @Sendable (Int32) -> Void) {
    let owner = getuid()
    while true {
      let client = accept(fd, nil, nil)
      if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }
      if client < 0 {
        switch errno {
        case EINTR, ECONNABORTED, EPROTO: continue
        case EMFILE, ENFILE, ENOBUFS, ENOMEM:
          // Out of descriptors: refuse for a moment rather than spin.
          log.warning("cannot accept a client", ["reason": UnixSocket.errorText()])
          usleep(100_000)
          continue
        default:
          return  // stop() shut the socket down
        }
      }
      guard let uid = UnixSocket.peerUID(client), uid == owner else {
        log.warning(
          "refused a client of another user",
          [
            "uid": UnixSocket.peerUID(client).map { String($0) } ?? "unknown",
            "pid": String(UnixSocket.peerPID(client)), "socket": path,
          ])
        close(client)
        continue
      }
      onAccept(client)
    }
  }

  /// Stops accepting and removes the socket file.
  func stop() {
    SocketFileRemoval.removeNow()
    shutdown(fd, Int32(SHUT_RDWR))
  }
}

/// Removes the socket file whatever way the process ends through `exit`: after a drain, or at
/// a second signal that exits at once. A `Sendable` box because `atexit` takes a C function,
/// which captures nothing.
private enum SocketFileRemoval {
  // Safety: `socket` is read and written only with `lock` held.
  nonisolated(unsafe) private static var socket: (path: String, inode: ino_t)?
  private static let lock = Condition()

  static func register(path: String, inode: ino_t) {
    lock.lock()
    let first = socket == nil
    socket = (path, inode)
    lock.unlock()
    if first { atexit { SocketFileRemoval.removeNow() } }
  }

  static func removeNow() {
    lock.lock()
    defer { lock.unlock() }
    guard let (path, inode) = socket else { return }
    socket = nil
    var current = stat()
    // Only our socket: another server may have replaced it meanwhile.
    if lstat(path, &current) == 0 && current.st_ino == inode { unlink(path) }
  }
}

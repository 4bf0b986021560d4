import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where `--listen` opens its socket: a path given on the command line, or the default path of
/// this process (`$XDG_RUNTIME_DIR/stateserver/PID.sock`).
public enum ListenAddress: Sendable, Equatable {
  /// `--listen` without a path.
  case defaultPath
  /// `--listen PATH`.
  case path(String)

  /// The socket path, with its directory made (mode 0700) when it is the default one and
  /// checked either way: only its owner may be able to put a socket there. Refusals are worded
  /// for the person who typed the command line.
  func resolve(
    environment: [String: String] = ProcessInfo.processInfo.environment,
    pid: Int32 = getpid(), uid: uid_t = getuid()
  ) throws(UnixSocket.Failure) -> String {
    switch self {
    case .path(let path):
      guard !path.isEmpty else {
        throw UnixSocket.Failure(message: "--listen was given an empty path")
      }
      let directory = FilePath.directory(of: path)
      try Self.checkPrivate(directory.isEmpty ? "." : directory, uid: uid, mustBeOwn: false)
      return path
    case .defaultPath:
      let directory: String
      if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
        directory = FilePath.join(runtime, "stateserver")
      } else {
        // The uid in the name keeps users apart in a shared temporary directory; the checks
        // below refuse a directory someone else made there first.
        directory = FilePath.join(FilePath.temporaryDirectory, "stateserver-\(uid)")
      }
      if mkdir(directory, 0o700) != 0 && errno != EEXIST {
        throw UnixSocket.Failure(
          message: "cannot create the socket directory '\(directory)': \(UnixSocket.errorText())")
      }
      try Self.checkPrivate(directory, uid: uid, mustBeOwn: true)
      return FilePath.join(directory, "\(pid).sock")
    }
  }

  /// Refuses a directory that group or others may write to (anyone could replace the socket),
  /// and with `mustBeOwn` one that another user owns.
  static func checkPrivate(_ directory: String, uid: uid_t, mustBeOwn: Bool)
    throws(UnixSocket.Failure)
  {
    var info = stat()
    guard stat(directory, &info) == 0 else {
      throw UnixSocket.Failure(
        message: "cannot use the socket directory '\(directory)': \(UnixSocket.errorText())")
    }
    guard info.st_mode & S_IFMT == S_IFDIR else {
      throw UnixSocket.Failure(message: "'\(directory)' is not a directory")
    }
    if info.st_mode & (S_IWGRP | S_IWOTH) != 0 {
      let mode = String(info.st_mode & 0o777, radix: 8)
      throw UnixSocket.Failure(
        message:
          "refusing to listen in '\(directory)': it is writable by group or others (mode \(mode)), so another user could replace the socket; use a directory only you can write to, e.g. one of mode 0700"
      )
    }
    if mustBeOwn && info.st_uid != uid {
      throw UnixSocket.Failure(
        message:
          "refusing to listen in '\(directory)': it belongs to uid \(info.st_uid), not to you (uid \(uid))"
      )
    }
  }
}

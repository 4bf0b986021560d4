import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `stateserver attach PATH`: joins its own stdin and stdout to a running core's `--listen`
/// socket, so any client that speaks to a spawned stateserver (a shell pipe, the Python or Node
/// client) attaches to a running one unchanged.
///
/// Input is copied to the socket as it comes; at its end the socket is half-closed, so the core
/// answers what was sent and then ends the connection. The bridge exits when the socket ends:
/// status 0, or 1 when it cannot connect.
///
/// ```sh
/// echo '{"jsonrpc":"2.0","id":1,"method":"store/list"}' | stateserver attach /run/user/1000/stateserver/4242.sock
/// ```
public enum AttachBridge {
  /// Runs the bridge for the arguments after `attach`; returns the exit status.
  public static func run(_ arguments: [String]) -> Int32 {
    guard arguments.count == 1, let path = arguments.first, !path.hasPrefix("-") else {
      Log.writeStandardError(
        Array(
          "usage: stateserver attach PATH\n  PATH: the socket of a core started with --listen\n"
            .utf8))
      return 2
    }
    signal(SIGPIPE, SIG_IGN)
    let socket: Int32
    do {
      socket = try UnixSocket.connect(to: path)
    } catch {
      Log.writeStandardError(Array("stateserver attach: \(error.message)\n".utf8))
      return 1
    }
    let upstream = OSThread(name: "stateserver.attach.stdin") {
      copy(from: 0, to: socket)
      // End of our input: the core answers what it got, then closes its side.
      shutdown(socket, Int32(SHUT_WR))
    }
    upstream.start()
    copy(from: socket, to: 1)
    return 0
  }

  /// Copies until `source` ends or `destination` fails.
  private static func copy(from source: Int32, to destination: Int32) {
    var buffer = [UInt8](repeating: 0, count: 64 << 10)
    while true {
      let count = buffer.withUnsafeMutableBytes { raw in
        guard let base = raw.baseAddress else { return -1 }
        while true {
          let n = read(source, base, raw.count)
          if n < 0 && errno == EINTR { continue }
          return n
        }
      }
      guard count > 0 else { return }
      var offset = 0
      while offset < count {
        let written = buffer.withUnsafeBytes { raw -> Int in
          guard let base = raw.baseAddress else { return -1 }
          return write(destination, base + offset, count - offset)
        }
        if written < 0 {
          if errno == EINTR { continue }
          return
        }
        offset += written
      }
    }
  }
}

import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Where StateKit reports programming errors: a view or event that does not encode, an effect
/// that threw with no catch handler. Features should turn failures into state; these lines are
/// for the developer, never for stdout (which carries protocol messages only).
///
/// By default a diagnostic is one line written to stderr at once. A host with its own log routes
/// them there, so they share its format and its queue (the server's never blocks on a stderr
/// nobody reads):
///
/// ```swift
/// Diagnostics.route { message in log.error(message) }
/// ```
public enum Diagnostics {
  /// Sends every later diagnostic to `sink` (process-wide, like stderr itself).
  public static func route(to sink: @escaping @Sendable (String) -> Void) {
    self.sink.withLock { $0 = sink }
  }

  /// Sends diagnostics to stderr again, one line each.
  public static func routeToStandardError() {
    sink.withLock { $0 = writeLine }
  }

  private static let sink = Mutex<@Sendable (String) -> Void>(writeLine)

  private static func writeLine(_ message: String) {
    var line = "stateserver: \(message)\n"
    line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
  }

  fileprivate static func send(_ message: String) {
    let current = sink.withLock { $0 }
    current(message)
  }
}

/// Reports a diagnostic for the developer through ``Diagnostics``.
func report(_ message: String) {
  Diagnostics.send(message)
}

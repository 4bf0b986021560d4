#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Writes a diagnostic for the developer to stderr (stdout carries protocol messages only).
func report(_ message: String) {
  var line = "stateserver: \(message)\n"
  line.withUTF8 { bytes in _ = write(2, bytes.baseAddress, bytes.count) }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A detached POSIX thread running one closure: what the server used Foundation's `Thread`
/// for. Foundation is not linked (only `FoundationEssentials`): the full library and its ICU
/// data cost about 3 MB of resident memory and a millisecond at every start, for nothing the
/// server uses.
final class OSThread: Sendable {
  private let body: @Sendable () -> Void
  /// Shown by `ps`, `top -H`, `perf` and debuggers; cut to the 15 bytes Linux keeps.
  let name: String

  init(name: String, _ body: @escaping @Sendable () -> Void) {
    self.name = name
    self.body = body
  }

  /// Starts the thread; it runs `body` once and ends. Creation fails only when the process is
  /// out of threads or memory, where the server cannot go on.
  func start() {
    let context = Unmanaged.passRetained(self).toOpaque()
    #if canImport(Glibc)
      var thread = pthread_t()
    #else
      var thread: pthread_t?
    #endif
    let status = pthread_create(
      &thread, nil,
      { context in
        // The context is the retained `OSThread` passed below: never nil.
        guard let context else { return nil }
        let this = Unmanaged<OSThread>.fromOpaque(context).takeRetainedValue()
        this.run()
        return nil
      }, context)
    guard status == 0 else {
      Unmanaged<OSThread>.fromOpaque(context).release()
      fatalError("pthread_create failed (\(status)) for thread \(name)")
    }
    pthread_detach(thread)
  }

  private func run() {
    #if os(Linux)
      // What pthread_setname_np does (Swift's Glibc module does not declare it): the kernel
      // keeps the first 15 bytes.
      let file = open("/proc/thread-self/comm", O_WRONLY)
      if file >= 0 {
        let bytes = Array(name.utf8.prefix(15))
        _ = bytes.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        close(file)
      }
    #endif
    body()
  }
}

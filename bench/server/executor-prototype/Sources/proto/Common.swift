import Dispatch
#if canImport(Glibc)
  import Glibc
#endif

/// Splits what stdin gives into lines.
final class Framer {
  var buffer: [UInt8] = []
  var chunk = [UInt8](repeating: 0, count: 65536)
  /// One read; nil at the end of input.
  func read(fd: Int32) -> [[UInt8]]? {
    let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
    if n <= 0 { return nil }
    buffer.append(contentsOf: chunk[0..<n])
    var lines: [[UInt8]] = []
    var start = 0
    for i in 0..<buffer.count where buffer[i] == UInt8(ascii: "\n") {
      lines.append(Array(buffer[start..<i]))
      start = i + 1
    }
    buffer.removeFirst(start)
    return lines
  }
}

/// The per-request work: a little state and the answer (the request echoed back with the
/// count in front, so latency.c finds its id), written straight to stdout.
final class Work {
  var count = 0
  var out: [UInt8] = []
  func serve(_ line: [UInt8]) {
    count += 1
    out.append(contentsOf: "{\"n\":\(count),\"r\":".utf8)
    out.append(contentsOf: line)
    out.append(contentsOf: "}\n".utf8)
  }
  func flush() {
    var done = 0
    while done < out.count {
      let n = out.withUnsafeBytes { write(1, $0.baseAddress! + done, $0.count - done) }
      if n <= 0 { break }
      done += n
    }
    out.removeAll(keepingCapacity: true)
  }
}

/// An effect: its result comes from another thread (a libdispatch worker), and its
/// continuation resumes on the actor, like a store's effect sending its result back.
nonisolated func effect(_ value: Int) async -> Int {
  await withUnsafeContinuation { continuation in
    DispatchQueue.global().async { continuation.resume(returning: value + 1) }
  }
}

let useEffect = CommandLine.arguments.count > 2 && CommandLine.arguments[2] == "effect"

func startThread(_ body: @escaping @Sendable () -> Void) {
  final class Box: @unchecked Sendable { let body: @Sendable () -> Void; init(_ b: @escaping @Sendable () -> Void) { body = b } }
  var thread = pthread_t()
  let box = Unmanaged.passRetained(Box(body)).toOpaque()
  pthread_create(&thread, nil, { raw in
    let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
    box.body()
    return nil
  }, box)
}

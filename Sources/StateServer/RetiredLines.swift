/// Served lines waiting to be freed by the thread that parsed them, a line or two before each
/// parse of that thread, instead of all at once: freeing a batch of hundreds of requests at once
/// overflows the allocator's per-thread cache (glibc's tcache keeps 7 chunks per size) into its
/// bins, and the next batch's allocations then take the slow path out of them. Freed a line at
/// a time, each line's frees feed the next line's allocations of the same sizes.
///
/// The parse-ahead thread keeps one for the lines it parsed (``LineFramer/retire(_:)``), the
/// main loop one for the lines it parsed itself (``MainLoop/takeAndServe()``).
struct RetiredLines {
  private var batches: [[InboundLine]] = []
  /// Lines waiting, in all batches.
  private(set) var count = 0

  mutating func retire(_ batch: [InboundLine]) {
    guard !batch.isEmpty else { return }
    count += batch.count
    batches.append(batch)
  }

  /// Frees every line now.
  mutating func dropAll() {
    batches = []
    count = 0
  }

  /// Frees one line, two while many wait, so the backlog never grows.
  @inline(__always)
  mutating func dropOne() {
    guard count > 0 else { return }
    for _ in 0..<(count > 1024 ? 2 : 1) {
      guard let last = batches.indices.last else { return }
      batches[last].removeLast()
      count -= 1
      if batches[last].isEmpty { batches.removeLast() }
    }
  }
}

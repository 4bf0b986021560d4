import CPosix

/// Gives the allocator's free memory back to the system once the server has been idle for a
/// moment (``delay``): the main loop waits at most that long after any activity, and calls
/// ``idle()`` when the wait ends with nothing to do.
///
/// Why: glibc's malloc keeps memory that was freed in the middle of its heaps, and raises its
/// threshold for giving large blocks back each time one is freed, so after a burst (a batch of
/// stores opened and closed, a slow reader's coalesced output) resident memory stays near its
/// peak although the server holds little. `bench/soak` measured it: the heap in use came back
/// to within a few hundred KB of the baseline while resident memory stayed above it, and
/// `malloc_trim(0)` brought it back (docs/guide/testing.md, "Fuzzing and soaking"). One trim per quiet period,
/// never on the hot path.
struct IdleTrim {
  /// Milliseconds without input or main-queue work before the trim.
  static let delay: Int32 = 1000

  /// Activity since the last trim.
  private var busy = false

  /// The main loop's `poll` timeout: `delay` once something happened, forever after a trim.
  var timeout: Int32 { busy ? Self.delay : -1 }

  mutating func sawActivity() { busy = true }

  /// The wait ended with nothing to do: trims once per quiet period.
  mutating func idle() {
    guard busy else { return }
    busy = false
    Self.trimFreeMemory()
  }

  /// `malloc_trim(0)` (glibc; a C library without it trims nothing), called directly: the
  /// release binary is static, where a run-time look-up (`dlsym`) finds nothing.
  static func trimFreeMemory() {
    cposix_trim_free_memory()
  }
}

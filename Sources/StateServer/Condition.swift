import FoundationEssentials

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A mutex with a condition variable (pthread), what the server used Foundation's
/// `NSCondition` for, with the same calls: `lock`, `unlock`, `wait`, `wait(until:)`,
/// `signal`, `broadcast`.
// Safety: the pthread mutex and condition are made for use from many threads; their storage
// is allocated once, never moves, and is freed only in deinit, when no thread can hold them.
final class Condition: @unchecked Sendable {
  private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
  private let cond = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

  init() {
    mutex.initialize(to: pthread_mutex_t())
    cond.initialize(to: pthread_cond_t())
    pthread_mutex_init(mutex, nil)
    pthread_cond_init(cond, nil)
  }

  deinit {
    pthread_cond_destroy(cond)
    pthread_mutex_destroy(mutex)
    cond.deallocate()
    mutex.deallocate()
  }

  func lock() { pthread_mutex_lock(mutex) }
  func unlock() { pthread_mutex_unlock(mutex) }
  /// Waits for a signal, the lock held before and after (wake-ups may be spurious: loop).
  func wait() { pthread_cond_wait(cond, mutex) }
  func signal() { pthread_cond_signal(cond) }
  func broadcast() { pthread_cond_broadcast(cond) }

  /// Waits for a signal until `deadline` (wall clock, as the condition's default clock);
  /// returns false when the deadline passed first.
  func wait(until deadline: Date) -> Bool {
    let seconds = deadline.timeIntervalSince1970
    let whole = seconds.rounded(.down)
    var time = timespec(
      tv_sec: Int(whole), tv_nsec: min(999_999_999, Int((seconds - whole) * 1_000_000_000)))
    return pthread_cond_timedwait(cond, mutex, &time) != ETIMEDOUT
  }
}

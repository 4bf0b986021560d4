#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// The date a thread's decoder read last, with its text, so that the same text read again is
/// not parsed again.
///
/// A state's elements repeat their dates (made at the same moments; the created and the
/// updated time of an element never edited), and the parser shares a repeated date's string
/// (``JSONStringCache``), so the same text usually comes again as the very same string, which
/// compares equal at once. A different text costs that comparison and the parse it needed
/// anyway.
///
/// One slot per thread, never shared, so it needs no lock.
enum DecodedDates {
  private struct Slot {
    var text = ""
    var date: Date?
  }

  /// The date written in `text` (``ISO8601Date/date(from:)``).
  static func date(from text: String) -> Date? {
    let slot = self.slot
    if let date = slot.pointee.date, slot.pointee.text == text { return date }
    let date = ISO8601Date.date(from: text)
    if date != nil { slot.pointee = Slot(text: text, date: date) }
    return date
  }

  /// The calling thread's slot, made at its first use and freed when the thread ends.
  private static var slot: UnsafeMutablePointer<Slot> {
    if let existing = pthread_getspecific(threadKey) {
      return existing.assumingMemoryBound(to: Slot.self)
    }
    let slot = UnsafeMutablePointer<Slot>.allocate(capacity: 1)
    slot.initialize(to: Slot())
    pthread_setspecific(threadKey, slot)
    return slot
  }

  private static let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { table in
      guard let slot = table?.assumingMemoryBound(to: Slot.self) else { return }
      slot.deinitialize(count: 1)
      slot.deallocate()
    }
    precondition(status == 0, "pthread_key_create failed (\(status))")
    return key
  }()
}

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

/// The encoded form of the dates a thread encoded lately, so that a date encoded again is the
/// same string, its storage shared, rather than a new one.
///
/// A date's wire form is 24 bytes, past what Swift keeps inline, so each encoded date was a box
/// and a string storage of its own (two allocations, about 130 bytes), and an encoded state
/// repeats many dates (the elements of a list made at the same moments, the created and the
/// updated time of an element never edited). A hit compares the date's bits. The boxes are
/// immutable, so sharing one between encodings (and so between threads) is safe.
///
/// One table per thread, never shared, so it needs no lock.
enum EncodedDates {
  private struct Slot {
    var bits: UInt64 = 0
    var value: JSON = .null
  }

  private static let slotBits = 4
  private static let slotCount = 1 << slotBits

  /// `.string` of `date`'s ISO 8601 form.
  static func value(of date: Date) -> JSON {
    let bits = date.timeIntervalSince1970.bitPattern
    let slot =
      slots + Int(truncatingIfNeeded: (bits &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - slotBits))
    if slot.pointee.bits == bits, case .string = slot.pointee.value { return slot.pointee.value }
    let value = JSON.string(ISO8601Date.string(from: date))
    slot.pointee = Slot(bits: bits, value: value)
    return value
  }

  /// The calling thread's table, made at its first use and freed when the thread ends.
  private static var slots: UnsafeMutablePointer<Slot> {
    if let existing = pthread_getspecific(threadKey) {
      return existing.assumingMemoryBound(to: Slot.self)
    }
    let slots = UnsafeMutablePointer<Slot>.allocate(capacity: slotCount)
    slots.initialize(repeating: Slot(), count: slotCount)
    pthread_setspecific(threadKey, slots)
    return slots
  }

  private static let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { table in
      guard let slots = table?.assumingMemoryBound(to: Slot.self) else { return }
      slots.deinitialize(count: EncodedDates.slotCount)
      slots.deallocate()
    }
    precondition(status == 0, "pthread_key_create failed (\(status))")
    return key
  }()
}

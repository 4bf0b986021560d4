#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The short strings a thread's parses made lately, so that the parser makes a key or a short
/// string value that came before without decoding it again.
///
/// Requests repeat their keys and many of their values (`"jsonrpc"`, `"2.0"`, `"method"`,
/// `"params"`, a store's name, an action's type). `String(decoding:as:)` checks and copies the
/// bytes each time, ten times per small request; a hit here compares two words. Only strings of
/// at most 15 UTF-8 bytes are kept: Swift stores those inline, so a cached one shares no storage
/// (no reference count touched by two threads) and the table holds no memory beyond its fixed
/// size.
///
/// A string *value* is also kept as the `JSON.string` made for it the first time; for a short
/// string that saves only the check and copy of its bytes (the string is inline in the value).
///
/// Longer string values, of 16 to 32 bytes, are kept too, in a second table: each such value
/// has a string storage of its own (an allocation, 64 bytes for a 24-byte date), and a large
/// state often repeats them (the dates of a list of notes: a state's elements are often made by
/// the same moments). A repeated one is then a retain of the shared storage, which is
/// immutable, so sharing it between the table and the values is safe; a new one costs a hash of
/// four words and the store in its slot.
///
/// One table per thread (``current``), never shared, so it needs no lock. This value only
/// points at the table: the parser holds it without reference counting.
package struct JSONStringCache {
  /// One slot: the bytes packed into two words, the last byte of `high` holding the count, and
  /// the string those bytes decode to. All zero bytes with count 0 is the empty string, so a
  /// fresh table is already correct.
  private struct Slot {
    var low: UInt64 = 0
    var high: UInt64 = 0
    var string = ""
    /// `.string(string)`, made at the first lookup as a value; `.null` until then.
    var boxed: JSON = .null
  }

  /// One slot of the long values' table: the bytes as four overlapping words (the first
  /// sixteen bytes and the last sixteen, which together cover 16 to 32 bytes), the count, and
  /// the boxed value; a count of 0 is an empty slot.
  private struct LongSlot {
    var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    var count = 0
    var boxed: JSON = .null
  }

  /// Both tables of a thread, in one allocation.
  private struct Tables {
    var slots: UnsafeMutablePointer<Slot>
    var longSlots: UnsafeMutablePointer<LongSlot>
  }

  /// Longest string kept: the longest Swift stores inline on 64-bit platforms.
  static let maximumLength = 15
  /// Longest string value kept as a shared box in the long values' table.
  static let maximumLongLength = 32
  private static let slotBits = 7
  private static let slotCount = 1 << slotBits
  private static let longSlotBits = 6
  private static let longSlotCount = 1 << longSlotBits
  private let slots: UnsafeMutablePointer<Slot>
  private let longSlots: UnsafeMutablePointer<LongSlot>

  /// The string of the UTF-8 `bytes`, which must be valid (the parser checked them).
  @inline(__always)
  package func string(_ bytes: UnsafeRawBufferPointer) -> String {
    guard let slot = slot(bytes) else { return String(decoding: bytes, as: UTF8.self) }
    return slot.pointee.string
  }

  /// `.string` of the UTF-8 `bytes` (valid, as for ``string(_:)``), the same box each time
  /// the bytes come again while their slot holds them.
  @inline(__always)
  package func value(_ bytes: UnsafeRawBufferPointer) -> JSON {
    guard let slot = slot(bytes) else { return longValue(bytes) }
    if case .string = slot.pointee.boxed { return slot.pointee.boxed }
    let value = JSON.string(slot.pointee.string)
    slot.pointee.boxed = value
    return value
  }

  /// `.string` of bytes longer than the short table keeps: from the long values' table when
  /// they are at most ``maximumLongLength`` bytes, made fresh otherwise.
  private func longValue(_ bytes: UnsafeRawBufferPointer) -> JSON {
    let count = bytes.count
    guard count > Self.maximumLength, count <= Self.maximumLongLength,
      let base = bytes.baseAddress
    else { return .string(String(decoding: bytes, as: UTF8.self)) }
    let words = (
      base.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
      base.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
      base.loadUnaligned(fromByteOffset: count - 16, as: UInt64.self),
      base.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
    )
    let mixed =
      (words.0 &* 0x9E37_79B9_7F4A_7C15) ^ (words.1 &* 0xC2B2_AE3D_27D4_EB4F)
      ^ (words.2 &* 0x1656_67B1_9E37_79F9) ^ (words.3 &* 0x85EB_CA77_C2B2_AE63)
      ^ UInt64(truncatingIfNeeded: count)
    let slot = longSlots + Int(truncatingIfNeeded: mixed >> UInt64(64 - Self.longSlotBits))
    if slot.pointee.count == count, slot.pointee.words == words { return slot.pointee.boxed }
    let value = JSON.string(String(decoding: bytes, as: UTF8.self))
    slot.pointee = LongSlot(words: words, count: count, boxed: value)
    return value
  }

  /// The slot holding `bytes`, filled with their string first if it held others; nil for
  /// bytes too long to keep.
  @inline(__always)
  private func slot(_ bytes: UnsafeRawBufferPointer) -> UnsafeMutablePointer<Slot>? {
    let count = bytes.count
    guard count <= Self.maximumLength, let base = bytes.baseAddress else { return nil }
    let (low, high) = Self.words(base, count)
    let mixed = (low &* 0x9E37_79B9_7F4A_7C15) ^ (high &* 0xC2B2_AE3D_27D4_EB4F)
    let slot = slots + Int(truncatingIfNeeded: mixed >> UInt64(64 - Self.slotBits))
    if slot.pointee.low != low || slot.pointee.high != high {
      slot.pointee = Slot(low: low, high: high, string: String(decoding: bytes, as: UTF8.self))
    }
    return slot
  }

  /// The `count` (at most 15) bytes at `base` as two little-endian words, the count in the
  /// last byte, read with overlapping loads that stay inside the bytes (no call to memcpy).
  @inline(__always)
  private static func words(_ base: UnsafeRawPointer, _ count: Int) -> (UInt64, UInt64) {
    func load<T: FixedWidthInteger & UnsignedInteger>(_ offset: Int, _: T.Type) -> UInt64 {
      UInt64(truncatingIfNeeded: base.loadUnaligned(fromByteOffset: offset, as: T.self))
    }
    var low: UInt64 = 0
    var high: UInt64 = 0
    switch count {
    case 8...:
      low = load(0, UInt64.self)
      // The word ending at the last byte, shifted so that byte 8 lands at the bottom.
      if count > 8 { high = load(count - 8, UInt64.self) >> UInt64(8 * (16 - count)) }
    case 4...:
      low = load(0, UInt32.self) | load(count - 4, UInt32.self) << UInt64(8 * (count - 4))
    case 2...:
      low = load(0, UInt16.self) | load(count - 2, UInt16.self) << UInt64(8 * (count - 2))
    case 1:
      low = load(0, UInt8.self)
    default:
      break
    }
    return (low, high | UInt64(truncatingIfNeeded: count) << 56)
  }

  /// The calling thread's table, made at its first use and freed when the thread ends.
  package static var current: JSONStringCache {
    if let existing = pthread_getspecific(threadKey) {
      let tables = existing.assumingMemoryBound(to: Tables.self).pointee
      return JSONStringCache(slots: tables.slots, longSlots: tables.longSlots)
    }
    let slots = UnsafeMutablePointer<Slot>.allocate(capacity: slotCount)
    slots.initialize(repeating: Slot(), count: slotCount)
    let longSlots = UnsafeMutablePointer<LongSlot>.allocate(capacity: longSlotCount)
    longSlots.initialize(repeating: LongSlot(), count: longSlotCount)
    let tables = UnsafeMutablePointer<Tables>.allocate(capacity: 1)
    tables.initialize(to: Tables(slots: slots, longSlots: longSlots))
    pthread_setspecific(threadKey, tables)
    return JSONStringCache(slots: slots, longSlots: longSlots)
  }

  /// The key of each thread's tables; its destructor frees them when the thread ends.
  private static let threadKey: pthread_key_t = {
    var key = pthread_key_t()
    let status = pthread_key_create(&key) { table in
      guard let tables = table?.assumingMemoryBound(to: Tables.self) else { return }
      tables.pointee.slots.deinitialize(count: JSONStringCache.slotCount)
      tables.pointee.slots.deallocate()
      tables.pointee.longSlots.deinitialize(count: JSONStringCache.longSlotCount)
      tables.pointee.longSlots.deallocate()
      tables.deinitialize(count: 1)
      tables.deallocate()
    }
    precondition(status == 0, "pthread_key_create failed (\(status))")
    return key
  }()
}

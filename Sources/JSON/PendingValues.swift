#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The values of a parse's open containers, on one stack: a closing bracket moves its values
/// out into their array or object, so no value is retained and released on the way.
///
/// Not copyable, so it owns its buffer alone and can destroy what a failed parse leaves behind
/// in its `deinit`, with no reference counted on each push. Used by one parser on one thread.
///
/// A stack that grows past a megabyte (a large state's array: a million elements are 24 MB of
/// values) is mapped memory of its own, so that a large array moving out can give the stack's
/// pages back behind it as it goes: the stack and the array it becomes are never both whole
/// in memory, at the moment a large parse peaks.
struct PendingValues: ~Copyable {
  private var base: UnsafeMutablePointer<JSON>
  private var capacity: Int
  private(set) var count = 0
  /// Whether `base` is mapped (`mmap`) rather than allocated.
  private var isMapped = false

  /// From this many bytes on the stack is mapped.
  private static let mappedBytes = 1 << 20

  init() {
    capacity = 16
    base = .allocate(capacity: capacity)
  }

  deinit {
    base.deinitialize(count: count)
    if isMapped {
      munmap(base, capacity * MemoryLayout<JSON>.stride)
    } else {
      base.deallocate()
    }
  }

  @inline(__always)
  mutating func push(_ value: consuming JSON) {
    if count == capacity { grow() }
    (base + count).initialize(to: value)
    count += 1
  }

  /// Puts `value` at `position` in place of the value there.
  mutating func replace(at position: Int, with value: consuming JSON) {
    (base + position).pointee = value
  }

  /// The values from `start` to the top, moved out into an array.
  mutating func popArray(from start: Int) -> [JSON] {
    let moved = count - start
    guard moved > 0 else { return [] }
    let array = [JSON](unsafeUninitializedCapacity: moved) { elements, initialized in
      guard let destination = elements.baseAddress else { return }
      guard isMapped else {
        destination.moveInitialize(from: base + start, count: moved)
        initialized = moved
        return
      }
      // A megabyte of values at a time, each stretch's whole pages given back once moved.
      let step = Self.mappedBytes / MemoryLayout<JSON>.stride
      var done = 0
      while done < moved {
        let stretch = min(step, moved - done)
        (destination + done).moveInitialize(from: base + start + done, count: stretch)
        done += stretch
        release(from: start, upTo: start + done)
      }
      initialized = moved
    }
    count = start
    return array
  }

  /// Gives back the whole pages of mapped stack that lie between positions `from` and `upTo`,
  /// whose values were moved out: they read as zeros when used again, and every position is
  /// initialized before it is read.
  private func release(from: Int, upTo: Int) {
    let page = Int(sysconf(Int32(_SC_PAGESIZE)))
    let low = UInt(bitPattern: base + from)
    let high = UInt(bitPattern: base + upTo)
    let first = (low + UInt(page) - 1) / UInt(page) * UInt(page)
    let last = high / UInt(page) * UInt(page)
    guard last > first, let start = UnsafeMutableRawPointer(bitPattern: first) else { return }
    madvise(start, Int(last - first), MADV_DONTNEED)
  }

  /// The values from `start` to the top, moved into `object` under the keys of `keys` from
  /// `keyStart` on, one key a value. The keys are read where they lie: a slice of them would
  /// retain and release their array once an object.
  mutating func moveMembers(
    from start: Int, keys: [String], keyStart: Int, into object: inout JSONObject
  ) {
    var position = start
    for key in keyStart..<keys.count {
      object.appendUnindexed(keys[key], (base + position).move())
      position += 1
    }
    count = start
  }

  private mutating func grow() {
    let stride = MemoryLayout<JSON>.stride
    let bytes = capacity * 2 * stride
    let mapped = bytes >= Self.mappedBytes ? Self.map(bytes) : nil
    let larger = mapped ?? .allocate(capacity: capacity * 2)
    larger.moveInitialize(from: base, count: count)
    if isMapped {
      munmap(base, capacity * stride)
    } else {
      base.deallocate()
    }
    base = larger
    isMapped = mapped != nil
    capacity *= 2
  }

  /// A new mapping of `bytes`, or nil when the system refuses (the stack then grows as an
  /// allocation).
  private static func map(_ bytes: Int) -> UnsafeMutablePointer<JSON>? {
    guard
      let raw = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
      raw != MAP_FAILED
    else { return nil }
    return raw.bindMemory(to: JSON.self, capacity: bytes / MemoryLayout<JSON>.stride)
  }
}

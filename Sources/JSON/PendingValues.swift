/// The values of a parse's open containers, on one stack: a closing bracket moves its values
/// out into their array or object, so no value is retained and released on the way.
///
/// Not copyable, so it owns its buffer alone and can destroy what a failed parse leaves behind
/// in its `deinit`, with no reference counted on each push. Used by one parser on one thread.
struct PendingValues: ~Copyable {
  private var base: UnsafeMutablePointer<JSON>
  private var capacity: Int
  private(set) var count = 0

  init() {
    capacity = 16
    base = .allocate(capacity: capacity)
  }

  deinit {
    base.deinitialize(count: count)
    base.deallocate()
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
      destination.moveInitialize(from: base + start, count: moved)
      initialized = moved
    }
    count = start
    return array
  }

  /// The values from `start` to the top, moved into `object` under `keys`, one key a value.
  mutating func moveMembers(
    from start: Int, keys: ArraySlice<String>, into object: inout JSONObject
  ) {
    var position = start
    for key in keys {
      object.appendUnindexed(key, (base + position).move())
      position += 1
    }
    count = start
  }

  private mutating func grow() {
    let larger = UnsafeMutablePointer<JSON>.allocate(capacity: capacity * 2)
    larger.moveInitialize(from: base, count: count)
    base.deallocate()
    base = larger
    capacity *= 2
  }
}

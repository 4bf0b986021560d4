import JSON

/// One object being walked: its path, the old members, the keys encoded so far. It is the
/// walk's `Encoder` for the value encoded there too (WalkEncoder.swift): a separate encoder
/// struct, and each container, held the walk and the level, a retain and a release more each.
final class WalkLevel {
  let walk: PatchWalk
  let path: JSONPointer
  let old: JSONObject
  /// Which old members were encoded again, by position (a bit each for the first 64).
  private var encodedMask: UInt64 = 0
  private var encodedBeyondMask: Set<Int> = []
  private var encodedCount = 0
  /// The levels of the nested containers encoded in this one, in order.
  var children: [WalkLevel] = []
  /// Set when the value used a container the walk cannot follow at this level. `visit` asks
  /// the level it made (`isPoisoned`), which asks its nested levels in turn: they hold no
  /// reference back to it (an unowned one cost an atomic `swift_unownedRetainStrong` and a
  /// release per load, and unowned reference counting per nested level).
  private var poisoned = false

  init(walk: PatchWalk, path: JSONPointer, old: JSONObject) {
    self.walk = walk
    self.path = path
    self.old = old
  }

  /// The old value of member `key`, noting that the new value encodes it.
  func encoded(_ key: String) -> JSON? {
    guard let position = old.position(of: key) else { return nil }
    if position < 64 {
      let bit = UInt64(1) << UInt64(position)
      if encodedMask & bit == 0 {
        encodedMask |= bit
        encodedCount += 1
      }
    } else if encodedBeyondMask.insert(position).inserted {
      encodedCount += 1
    }
    return old.value(at: position)
  }

  /// Publishes the scalar `value` of member `name`. Here rather than in the keyed container,
  /// which reached the walk through this level with a retain and a release per leaf.
  func leaf(_ value: JSON, _ name: String) {
    walk.leaf(value, at: walk.path(under: path, name), old: encoded(name))
  }

  /// The whole level was replaced by one value: no member is left over.
  func encodedAll() { encodedCount = old.count }

  var encodedEveryOldKey: Bool { encodedCount >= old.count }

  func wasEncoded(_ position: Int) -> Bool {
    position < 64
      ? encodedMask & (UInt64(1) << UInt64(position)) != 0
      : encodedBeyondMask.contains(position)
  }

  /// Whether this level or one nested in it used a container the walk cannot follow: the
  /// value `visit` walks is then encoded whole.
  var isPoisoned: Bool {
    poisoned || (!children.isEmpty && children.contains { $0.isPoisoned })
  }

  func poisonWalk() { poisoned = true }

  func nested(_ key: String, old: JSONObject) -> WalkLevel {
    let child = WalkLevel(walk: walk, path: path.appending(key), old: old)
    children.append(child)
    return child
  }
}

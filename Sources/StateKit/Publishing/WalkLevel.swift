import JSON

/// One object being walked: its path, the old members, the keys encoded so far. It is the
/// walk's `Encoder` for the value encoded there too (WalkEncoder.swift): a separate encoder
/// struct, and each container, held the walk and the level, a retain and a release more each.
///
/// A publisher's walker keeps its levels from walk to walk, one per depth of `visit`
/// (`PatchWalk.reusesLevels`), and such a level keeps the keyed containers it hands out, by
/// key type (`container(keyedBy:)`): see `keptContainers`.
final class WalkLevel {
  let walk: PatchWalk
  private(set) var path: JSONPointer
  /// The old members; nil once a reused level is done with them (`vacate()`), so that it
  /// holds nothing (an empty object would be a retain of the shared empty buffer).
  private var held: JSONObject?
  var old: JSONObject { held ?? JSONObject() }
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
  /// Whether this level keeps the keyed containers it hands out (`keptContainers`): only a
  /// level its walker reuses does, and that walker breaks the cycle (a kept container holds
  /// its level) when it lets its levels go (`PatchWalk.releaseLevels()`).
  let keepsContainers: Bool
  /// The keyed containers handed out, by key type (the `ObjectIdentifier` of `Key.self` in
  /// `containerKeys`, at the same position). Making one cost three generic metadata lookups
  /// per walked object: `WalkKeyedContainer<Key>`, its conformance, and the standard library's
  /// `_KeyedEncodingContainerBox<WalkKeyedContainer<Key>>`, and the box's allocation (a fifth
  /// of a counter's publication, docs/architecture.md); handing out a kept one
  /// costs the one lookup that copying a `KeyedEncodingContainer<Key>` needs. Handing the same
  /// container out again is what a new one would be: it holds nothing but this level. A few
  /// key types at most (a level is reused for every object at its depth), so a short scan.
  private var containerKeys: [ObjectIdentifier] = []
  private var keptContainers: [AnyObject] = []
  private static let keptContainerLimit = 8

  init(walk: PatchWalk, path: JSONPointer, old: JSONObject, keepsContainers: Bool = false) {
    self.walk = walk
    self.path = path
    self.held = old
    self.keepsContainers = keepsContainers
  }

  /// Makes this level, which its walker keeps, the one of another object: as new, but for the
  /// containers it keeps.
  func reuse(path: JSONPointer, old: consuming JSONObject) {
    self.path = path
    self.held = consume old
    encodedMask = 0
    encodedCount = 0
    if !encodedBeyondMask.isEmpty { encodedBeyondMask = [] }
    poisoned = false
  }

  /// Lets go of what this level holds of the published JSON (its old members, its nested
  /// levels), once its object is walked: the publisher applies the patch to that JSON next,
  /// and a second reference would make it copy what it edits.
  func vacate() {
    held = nil
    if !children.isEmpty { children = [] }
  }

  /// Breaks the cycles between this level and its kept containers.
  func forgetContainers() {
    containerKeys = []
    keptContainers = []
  }

  /// A keyed container over this level: the one kept for `Key` if there is one (see
  /// `keptContainers`), else a new one, kept when this level keeps containers.
  func keyedContainer<Key: CodingKey>(_ type: Key.Type) -> KeyedEncodingContainer<Key> {
    guard keepsContainers else {
      return KeyedEncodingContainer(WalkKeyedContainer<Key>(level: self))
    }
    let key = ObjectIdentifier(type)
    if let position = containerKeys.firstIndex(of: key) {
      // Kept under `Key`'s identifier, so made as a `KeptContainer<Key>`.
      return unsafeDowncast(keptContainers[position], to: KeptContainer<Key>.self).container
    }
    let container = KeyedEncodingContainer(WalkKeyedContainer<Key>(level: self))
    if containerKeys.count < Self.keptContainerLimit {
      containerKeys.append(key)
      keptContainers.append(KeptContainer(container))
    }
    return container
  }

  /// The old value of member `key`, noting that the new value encodes it.
  func encoded(_ key: String) -> JSON? {
    // Looked up where the members lie (a read of the property, or a binding, copied them).
    guard let (position, value) = held?.lookUpInPlace(key) else { return nil }
    if position < 64 {
      let bit = UInt64(1) << UInt64(position)
      if encodedMask & bit == 0 {
        encodedMask |= bit
        encodedCount += 1
      }
    } else if encodedBeyondMask.insert(position).inserted {
      encodedCount += 1
    }
    return value
  }

  /// Publishes the scalar `value` of member `name`. Here rather than in the keyed container,
  /// which reached the walk through this level with a retain and a release per leaf.
  func leaf(_ value: JSON, _ name: String) {
    walk.leaf(value, at: walk.path(under: &path, name), old: encoded(name))
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

/// A keyed container a `WalkLevel` keeps, boxed so that the level can keep containers of any
/// key type in one array.
private final class KeptContainer<Key: CodingKey> {
  let container: KeyedEncodingContainer<Key>

  init(_ container: KeyedEncodingContainer<Key>) { self.container = container }
}

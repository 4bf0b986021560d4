import Dispatch
import Synchronization

/// The position of each element of an `IdentifiedArray`, by id: one dictionary, or, for an array
/// decoded at a size of at least `PositionIndexSplit.threshold`, two, each id in the one that the
/// highest bit of its hash picks.
///
/// Why two: the index of a large decoded array was built on one thread after the two-thread
/// decode, the one long phase of a large open that left a core idle (docs/architecture.md, "The
/// open at scale"). Each dictionary of a split index is built by a thread of its own. A lookup
/// or an edit pays one more hash, to pick the dictionary; nothing else changes.
///
/// The bit is the highest of the id's `hashValue`. A dictionary picks its buckets by the low
/// bits of a hash under a seed of its own, so the ids of one half still spread over all of its
/// buckets.
@usableFromInline
struct PositionIndex<ID: Hashable & Sendable>: Sendable {
  /// Every id when the index is not split; else the ids whose hash is not negative.
  @usableFromInline var first: [ID: Int]
  /// When split, the ids whose hash is negative; else empty.
  @usableFromInline var second: [ID: Int]
  @usableFromInline var isSplit: Bool

  /// One dictionary.
  @usableFromInline
  init(_ positions: [ID: Int]) {
    first = positions
    second = [:]
    isSplit = false
  }

  @usableFromInline
  init(first: [ID: Int], second: [ID: Int]) {
    self.first = first
    self.second = second
    isSplit = true
  }

  @inlinable
  static func isInSecond(_ id: ID) -> Bool { id.hashValue < 0 }

  /// The position of `id`; setting `nil` removes it.
  subscript(id: ID) -> Int? {
    get { isSplit && Self.isInSecond(id) ? second[id] : first[id] }
    set {
      if isSplit && Self.isInSecond(id) {
        second[id] = newValue
      } else {
        first[id] = newValue
      }
    }
  }

  /// How many ids the index holds.
  var count: Int { first.count + second.count }

  /// Forgets every id; the empty index is one dictionary again.
  mutating func removeAll() { self = PositionIndex([:]) }
}

/// When the index of a decoded array is split.
@usableFromInline
package enum PositionIndexSplit {
  /// Elements below which the index of a decoded array is one dictionary built on the
  /// decoding thread: for a small array, the second thread costs more than it saves. Tests
  /// lower it to split small arrays.
  @TaskLocal package static var threshold = 4_096

  /// `threshold`, for inlinable code.
  @usableFromInline static var current: Int { threshold }
}

extension PositionIndex {
  /// The index of `elements`, or `nil` when two of them have the same id.
  ///
  /// A large array's two dictionaries are built at once, each by a thread of its own that
  /// reads every element and keeps the ids that go to its dictionary: no lock, and two elements
  /// with the same id meet in the same dictionary wherever they are. Each thread hashes every
  /// id once more to pick it; first sorting each half's positions by dictionary on two threads,
  /// so that each id was hashed to pick once, measured no faster in the open (the inserts,
  /// and the first touch of the dictionaries' memory, are most of the time).
  @inlinable
  static func building<Element: Identifiable & Sendable>(_ elements: [Element]) -> Self?
  where Element.ID == ID {
    guard elements.count >= PositionIndexSplit.current else {
      var positions = [ID: Int](minimumCapacity: elements.count)
      for position in elements.indices
      where positions.updateValue(position, forKey: elements[position].id) != nil {
        return nil
      }
      return PositionIndex(positions)
    }
    let built = Mutex<[[ID: Int]?]>([nil, nil])
    DispatchQueue.concurrentPerform(iterations: 2) { part in
      // Half the ids and a little more: the hashes split the ids about evenly, so neither
      // dictionary grows.
      var positions = [ID: Int](minimumCapacity: elements.count / 2 + elements.count / 64)
      for position in elements.indices
      where Self.isInSecond(elements[position].id) == (part == 1)
        && positions.updateValue(position, forKey: elements[position].id) != nil
      {
        return
      }
      built.withLock { $0[part] = positions }
    }
    let parts = built.withLock { $0 }
    guard let first = parts[0], let second = parts[1] else { return nil }
    return PositionIndex(first: first, second: second)
  }
}

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
  /// A large array's index is built in two passes, each on two threads: each thread sorts the
  /// positions of one half of the array by the dictionary their id goes to, then each builds
  /// one dictionary from the positions both sorted for it. Each thread hashes each of its ids
  /// once to sort it (where one pass over all the elements per dictionary hashed every id on
  /// both threads), and each dictionary is built by one thread, so it needs no lock. Two
  /// elements with the same id go to the same dictionary, whichever halves they are in.
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
    let middle = elements.count / 2
    let halves = [0..<middle, middle..<elements.count]
    // sorted[half][part]: the positions of that half whose id goes to that dictionary.
    let sorted = Mutex<[[[Int]]]>([[], []])
    DispatchQueue.concurrentPerform(iterations: 2) { half in
      var parts: [[Int]] = [[], []]
      for part in 0..<2 { parts[part].reserveCapacity(halves[half].count / 2 + 64) }
      for position in halves[half] {
        parts[Self.isInSecond(elements[position].id) ? 1 : 0].append(position)
      }
      sorted.withLock { $0[half] = parts }
    }
    let lists = sorted.withLock { $0 }
    let built = Mutex<[[ID: Int]?]>([nil, nil])
    DispatchQueue.concurrentPerform(iterations: 2) { part in
      var positions = [ID: Int](minimumCapacity: lists[0][part].count + lists[1][part].count)
      for half in 0..<2 {
        for position in lists[half][part]
        where positions.updateValue(position, forKey: elements[position].id) != nil {
          return
        }
      }
      built.withLock { $0[part] = positions }
    }
    let parts = built.withLock { $0 }
    guard let first = parts[0], let second = parts[1] else { return nil }
    return PositionIndex(first: first, second: second)
  }
}

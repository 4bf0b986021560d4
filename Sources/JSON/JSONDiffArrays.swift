// Array diffs. Both strategies first drop the common prefix and suffix (compared by storage
// identity, then by value), so one changed element of a 100,000-element array leaves a middle
// of one element on each side: the id maps and the subsequence search only ever see the middle.

extension Differ {
  mutating func diffArrays(_ a: [JSON], _ b: [JSON]) {
    let shorter = min(a.count, b.count)
    let prefix = JSON.commonRun(a, b, limit: shorter, fromEnd: false)
    let suffix = JSON.commonRun(a, b, limit: shorter - prefix, fromEnd: true)
    let old = a[prefix..<(a.count - suffix)]
    let new = b[prefix..<(b.count - suffix)]
    if old.isEmpty && new.isEmpty { return }
    if old.count == 1 && new.count == 1 {
      // One element replaced by another (the trim found them different): diff the pair, which
      // is what either strategy would conclude, without hashing them.
      diff(a[prefix], b[prefix], at: String(prefix))
      return
    }
    if old.count == new.count, let changed = Differ.changedInPlace(a, b, in: old.indices) {
      for index in changed { diff(a[index], b[index], at: String(index)) }
      return
    }
    if let oldIDs = Differ.distinctIDs(old), let newIDs = Differ.distinctIDs(new) {
      diffKeyed(old, new, oldIDs: oldIDs, newIDs: newIDs, offset: prefix)
    } else {
      diffUnkeyed(old, new, offset: prefix)
    }
  }

  /// The positions in `range` where `a` and `b` differ, when at each of them both elements are
  /// objects with the same `id`: then nothing moved, and each changed element is diffed where
  /// it is. `nil` as soon as one position does not match that way.
  ///
  /// Several elements edited far apart in a large keyed array take this path, which skips the
  /// unchanged stretches between them at memory speed instead of hashing every id.
  private static func changedInPlace(_ a: [JSON], _ b: [JSON], in range: Range<Int>) -> [Int]? {
    var changed: [Int] = []
    var index = range.lowerBound
    while index < range.upperBound {
      index += JSON.commonRun(
        a, b, skipping: index, limit: range.upperBound - index, fromEnd: false)
      guard index < range.upperBound else { break }
      guard case .object(let old) = a[index], case .object(let new) = b[index],
        let id = old["id"], new["id"] == id
      else { return nil }
      changed.append(index)
      index += 1
    }
    return changed
  }

  /// The `id` of every element, when every element is an object with an `id` member and no
  /// two share one; otherwise `nil`.
  private static func distinctIDs(_ elements: ArraySlice<JSON>) -> [JSON: Int]? {
    var ids: [JSON: Int] = [:]
    ids.reserveCapacity(elements.count)
    for (offset, element) in elements.enumerated() {
      guard case .object(let object) = element, let id = object["id"] else { return nil }
      guard ids.updateValue(offset, forKey: id) == nil else { return nil }
    }
    return ids
  }

  /// Elements matched by `id`: removals, then moves and insertions in target order, then the
  /// matched elements' own changes at their final positions.
  ///
  /// Elements on a longest increasing subsequence (by new position, in old order) stay put;
  /// every other surviving element is moved once. Positions are tracked with a Fenwick tree
  /// over "slots" laid out in final array order, so each operation's index costs O(log n).
  private mutating func diffKeyed(
    _ old: ArraySlice<JSON>, _ new: ArraySlice<JSON>,
    oldIDs: [JSON: Int], newIDs: [JSON: Int], offset: Int
  ) {
    let oldElements = Array(old)
    let newElements = Array(new)
    // New position of each old element, nil when it is gone.
    var newPosition = [Int?](repeating: nil, count: oldElements.count)
    for (id, oldIndex) in oldIDs { newPosition[oldIndex] = newIDs[id] }
    // Old position of each new element, nil when it is inserted.
    var oldPosition = [Int?](repeating: nil, count: newElements.count)
    for (oldIndex, target) in newPosition.enumerated() {
      if let target { oldPosition[target] = oldIndex }
    }

    // 1. Removals, last first, so earlier indices stay valid.
    for oldIndex in oldElements.indices.reversed() where newPosition[oldIndex] == nil {
      emit(.remove(path: pointer.appending(index: offset + oldIndex)))
    }
    let survivors = oldElements.indices.compactMap { newPosition[$0] }  // new positions, old order
    let stable = Differ.longestIncreasingSubsequence(survivors)
    var isStable = [Bool](repeating: false, count: newElements.count)
    for position in stable { isStable[position] = true }

    // 2. Slots in final order. Between two stable elements come first the slots where movers
    //    and insertions land (in new order), then the slots movers leave (in old order).
    var arrivalSlot = [Int](repeating: 0, count: newElements.count)
    var departureSlot = [Int](repeating: 0, count: newElements.count)
    var slotCount = 0
    var nextSurvivor = 0
    for position in newElements.indices {
      if isStable[position] {
        // Departures of movers that sat before this stable element in the old order.
        while nextSurvivor < survivors.count, survivors[nextSurvivor] != position {
          departureSlot[survivors[nextSurvivor]] = slotCount
          slotCount += 1
          nextSurvivor += 1
        }
        nextSurvivor += 1  // the stable element itself
        arrivalSlot[position] = slotCount
        slotCount += 1
      } else {
        arrivalSlot[position] = slotCount
        slotCount += 1
      }
    }
    while nextSurvivor < survivors.count {
      departureSlot[survivors[nextSurvivor]] = slotCount
      slotCount += 1
      nextSurvivor += 1
    }
    var occupied = FenwickTree(count: slotCount)
    for position in survivors {
      occupied.add(1, at: isStable[position] ? arrivalSlot[position] : departureSlot[position])
    }

    // 3. Moves and insertions, in new order.
    for position in newElements.indices where !isStable[position] {
      let to: Int
      if oldPosition[position] != nil {
        let from = occupied.prefixSum(before: departureSlot[position])
        occupied.add(-1, at: departureSlot[position])
        to = occupied.prefixSum(before: arrivalSlot[position])
        occupied.add(1, at: arrivalSlot[position])
        if from != to {
          emit(
            .move(
              from: pointer.appending(index: offset + from),
              path: pointer.appending(index: offset + to)))
        }
      } else {
        to = occupied.prefixSum(before: arrivalSlot[position])
        occupied.add(1, at: arrivalSlot[position])
        emit(.add(path: pointer.appending(index: offset + to), value: newElements[position]))
      }
    }

    // 4. The array now has the new order; diff each matched element where it ended up.
    for position in newElements.indices {
      guard let oldIndex = oldPosition[position] else { continue }
      diff(oldElements[oldIndex], newElements[position], at: String(offset + position))
    }
  }

  /// Elements without ids: a longest common subsequence stays, and each run between two kept
  /// elements becomes element diffs (pairing removed with inserted elements in order), then
  /// removals or insertions of the remainder (JSONDiffSubsequence.swift).
  private mutating func diffUnkeyed(
    _ old: ArraySlice<JSON>, _ new: ArraySlice<JSON>, offset: Int
  ) {
    let oldElements = Array(old)
    let newElements = Array(new)
    // Past the edit budget, elements are paired by position: still correct, and the patch is
    // still capped at one replace of the array.
    let kept = Differ.longestCommonSubsequence(oldElements, newElements) ?? []
    var position = offset  // where the next element of the result goes
    var oldNext = 0
    var newNext = 0
    for pair in kept + [(old: oldElements.count, new: newElements.count)] {
      let removed = pair.old - oldNext
      let inserted = pair.new - newNext
      let paired = min(removed, inserted)
      for step in 0..<paired {
        diff(oldElements[oldNext + step], newElements[newNext + step], at: String(position + step))
      }
      for _ in paired..<removed {
        emit(.remove(path: pointer.appending(index: position + paired)))
      }
      for step in paired..<inserted {
        emit(
          .add(path: pointer.appending(index: position + step), value: newElements[newNext + step]))
      }
      position += inserted + 1
      oldNext = pair.old + 1
      newNext = pair.new + 1
    }
  }

  /// The values of a longest strictly increasing subsequence of `values` (patience sorting,
  /// O(n log n)).
  static func longestIncreasingSubsequence(_ values: [Int]) -> [Int] {
    var tails: [Int] = []  // tails[k]: index in `values` of the smallest tail of a run of k+1
    var previous = [Int](repeating: -1, count: values.count)
    for (index, value) in values.enumerated() {
      var low = 0
      var high = tails.count
      while low < high {
        let middle = (low + high) / 2
        if values[tails[middle]] < value { low = middle + 1 } else { high = middle }
      }
      if low > 0 { previous[index] = tails[low - 1] }
      if low == tails.count { tails.append(index) } else { tails[low] = index }
    }
    var result: [Int] = []
    var index = tails.last ?? -1
    while index >= 0 {
      result.append(values[index])
      index = previous[index]
    }
    return result.reversed()
  }
}

/// Counts of occupied slots with O(log n) updates and prefix sums.
struct FenwickTree {
  private var tree: [Int]

  init(count: Int) {
    tree = [Int](repeating: 0, count: count + 1)
  }

  mutating func add(_ delta: Int, at slot: Int) {
    var index = slot + 1
    while index < tree.count {
      tree[index] += delta
      index += index & -index
    }
  }

  /// The sum over slots `0..<slot`.
  func prefixSum(before slot: Int) -> Int {
    var index = slot
    var sum = 0
    while index > 0 {
      sum += tree[index]
      index -= index & -index
    }
    return sum
  }
}

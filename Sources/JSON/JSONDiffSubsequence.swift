// The longest common subsequence of two unkeyed array middles, by Myers' algorithm ("An O(ND)
// Difference Algorithm and Its Variations", 1986): time O((n + m) · D) and memory O(D²) for D
// insertions and removals, so a few edits in a long array stay cheap. Past an edit budget
// (scaled so the work stays bounded) it gives up and the caller pairs elements by position.

extension Differ {
  /// Work budget in element comparisons, roughly: `(n + m) · D` stays below it.
  static let subsequenceWork = 20_000_000
  /// At most this many edits are searched for, whatever the lengths (the trace is O(D²)).
  static let subsequenceMaxEdits = 1_000

  /// Index pairs of a longest common subsequence of `a` and `b`, in order; `nil` when the two
  /// differ by more edits than the budget allows. Elements are first mapped to small integers
  /// (equal elements, equal integers), so the search compares integers.
  static func longestCommonSubsequence(_ a: [JSON], _ b: [JSON]) -> [(old: Int, new: Int)]? {
    var classes: [JSON: Int] = [:]
    var x: [Int] = []
    x.reserveCapacity(a.count)
    for element in a {
      if let known = classes[element] {
        x.append(known)
      } else {
        x.append(classes.count)
        classes[element] = classes.count
      }
    }
    let y = b.map { classes[$0] ?? -1 }
    let budget = min(subsequenceMaxEdits, subsequenceWork / max(1, x.count + y.count))
    return myers(x, y, maxEdits: max(budget, 16))
  }

  /// Myers' greedy forward search. `v[k + offset]` is the furthest `x` index reached on
  /// diagonal `k = i - j`; `trace[d]` keeps diagonals `-d...d` as they were before step `d`,
  /// which is what the walk back needs.
  static func myers(_ x: [Int], _ y: [Int], maxEdits: Int) -> [(old: Int, new: Int)]? {
    let n = x.count
    let m = y.count
    let limit = min(maxEdits, n + m)
    let offset = limit + 1
    var v = [Int](repeating: 0, count: 2 * limit + 3)
    var trace: [[Int]] = []
    var finalStep: Int?
    search: for d in 0...limit {
      trace.append(Array(v[(offset - d)...(offset + d)]))
      for k in stride(from: -d, through: d, by: 2) {
        var i =
          (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
          ? v[offset + k + 1]  // down: an insertion
          : v[offset + k - 1] + 1  // right: a removal
        var j = i - k
        while i < n, j < m, x[i] == y[j] {
          i += 1
          j += 1
        }
        v[offset + k] = i
        if i >= n, j >= m {
          finalStep = d
          break search
        }
      }
    }
    guard let finalStep else { return nil }

    var pairs: [(old: Int, new: Int)] = []
    var i = n
    var j = m
    for d in stride(from: finalStep, to: 0, by: -1) {
      let before = trace[d]  // diagonals -d...d, at index k + d
      let k = i - j
      let previousK =
        (k == -d || (k != d && before[k - 1 + d] < before[k + 1 + d])) ? k + 1 : k - 1
      let previousI = before[previousK + d]
      let previousJ = previousI - previousK
      // The snake after the edit of step d, walked back.
      let editEndI = previousK == k + 1 ? previousI : previousI + 1
      let editEndJ = editEndI - k
      while i > editEndI, j > editEndJ {
        i -= 1
        j -= 1
        pairs.append((i, j))
      }
      i = previousI
      j = previousJ
    }
    while i > 0, j > 0 {
      i -= 1
      j -= 1
      pairs.append((i, j))
    }
    return pairs.reversed()
  }
}

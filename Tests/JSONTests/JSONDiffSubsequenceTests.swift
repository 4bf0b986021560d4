import Testing

@testable import JSON

@Suite struct JSONDiffSubsequenceTests {
  /// The length of a longest common subsequence by the textbook table, as the reference.
  static func referenceLength(_ x: [Int], _ y: [Int]) -> Int {
    var table = [[Int]](repeating: [Int](repeating: 0, count: y.count + 1), count: x.count + 1)
    for i in x.indices.reversed() {
      for j in y.indices.reversed() {
        table[i][j] = x[i] == y[j] ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
      }
    }
    return table[0][0]
  }

  @Test func myersFindsALongestCommonSubsequence() throws {
    var random = SeededRandom(seed: 7)
    for _ in 0..<2_000 {
      let x = (0..<Int.random(in: 0..<30, using: &random)).map { _ in
        Int.random(in: 0..<6, using: &random)
      }
      let y = (0..<Int.random(in: 0..<30, using: &random)).map { _ in
        Int.random(in: 0..<6, using: &random)
      }
      let pairs = try #require(Differ.myers(x, y, maxEdits: 100))
      #expect(pairs.count == Self.referenceLength(x, y), "\(x) \(y)")
      for (index, pair) in pairs.enumerated() {
        #expect(x[pair.old] == y[pair.new])
        if index > 0 {
          #expect(pair.old > pairs[index - 1].old && pair.new > pairs[index - 1].new)
        }
      }
    }
  }

  @Test func myersGivesUpPastTheEditBudget() {
    #expect(Differ.myers(Array(0..<50), Array(50..<100), maxEdits: 20) == nil)
    #expect(Differ.myers(Array(0..<50), Array(0..<50), maxEdits: 0)?.count == 50)
  }

  @Test func fewEditsInALargeUnkeyedArrayStaySmall() throws {
    let old = (0..<100_000).map { JSON.integer(Int64($0)) }
    var new = old
    new.insert("first", at: 0)
    new[50_001] = "middle"
    new.remove(at: 90_001)
    let patch = JSONPatch.diff(from: ["log": .array(old)], to: ["log": .array(new)])
    #expect(
      patch.operations == [
        .add(path: "/log/0", value: "first"),
        .replace(path: "/log/50001", value: "middle"),
        .remove(path: "/log/90001"),
      ])
    #expect(try patch.applied(to: ["log": .array(old)]) == ["log": .array(new)])
  }
}

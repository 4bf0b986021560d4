import Testing

@testable import JSON

@Suite struct JSONPatchApplyTests {
  @Test func appliesEachOperation() throws {
    var document: JSON = ["a": 1, "list": [1, 2, 3], "nested": ["x": "y"]]
    let patch = JSONPatch([
      .add(path: "/b", value: 2),
      .add(path: "/list/0", value: 0),
      .add(path: "/list/-", value: 4),
      .remove(path: "/a"),
      .replace(path: "/nested/x", value: "z"),
      .move(from: "/nested", path: "/moved"),
      .copy(from: "/list/1", path: "/one"),
      .test(path: "/one", value: 1.0),
    ])
    try patch.apply(to: &document)
    #expect(document == ["b": 2, "list": [0, 1, 2, 3, 4], "moved": ["x": "z"], "one": 1])
  }

  @Test func rootOperationsReplaceTheDocument() throws {
    #expect(try JSONPatch([.add(path: "", value: [1])]).applied(to: ["a": 1]) == [1])
    #expect(try JSONPatch([.replace(path: "", value: "x")]).applied(to: 5) == "x")
    #expect(throws: JSONPatchError.self) {
      try JSONPatch([.remove(path: "")]).applied(to: ["a": 1])
    }
  }

  /// `apply(to:retiring:)` edits as `apply(to:)` does and hands over what it replaced or
  /// removed, in order; a failed patch leaves the document and the retired values as they were.
  @Test func retiringKeepsWhatWasReplacedOrRemoved() throws {
    let original: JSON = ["a": 1, "list": [1, 2, 3], "nested": ["x": "y"]]
    let patch = JSONPatch([
      .add(path: "/a", value: 10),
      .add(path: "/b", value: 2),
      .replace(path: "/list/1", value: 20),
      .remove(path: "/list/0"),
      .add(path: "/list/-", value: 4),
      .replace(path: "/nested/x", value: "z"),
      .move(from: "/nested", path: "/moved"),
      .remove(path: "/b"),
    ])
    var document = original
    var retired: [JSON] = ["earlier"]
    try patch.apply(to: &document, retiring: &retired)
    #expect(document == (try patch.applied(to: original)))
    #expect(retired == ["earlier", 1, 2, 1, "y", ["x": "z"], 2])

    let failing = JSONPatch([.remove(path: "/a"), .test(path: "/list/0", value: 99)])
    var unchanged = document
    var kept = retired
    #expect(throws: JSONPatchError.self) { try failing.apply(to: &unchanged, retiring: &kept) }
    #expect(unchanged == document)
    #expect(kept == retired)
  }

  @Test func addToExistingMemberReplacesItInPlace() throws {
    let result = try JSONPatch([.add(path: "/a", value: 9)]).applied(to: ["a": 1, "b": 2])
    #expect(result.objectValue?.keys == ["a", "b"])
    #expect(result["a"] == 9)
  }

  @Test func failedPatchLeavesDocumentUnchangedIncludingKeyOrder() throws {
    let original: JSON = ["a": 1, "b": ["c": [1, 2, 3]], "d": [["e": 1]], "z": true]
    var document = original
    let patch = JSONPatch([
      .remove(path: "/a"),
      .replace(path: "/b/c/1", value: 20),
      .add(path: "/b/c/0", value: 0),
      .remove(path: "/b/c/3"),
      .move(from: "/d/0", path: "/b/moved"),
      .add(path: "", value: "whole"),
      .replace(path: "", value: ["q": 1]),
      .add(path: "/q", value: 2),
      .test(path: "/q", value: 3),  // fails: the document is now ["q": 2]
    ])
    do {
      try patch.apply(to: &document)
      Issue.record("the test operation should have failed")
    } catch {
      #expect(error.operationIndex == 8)
      #expect(error.kind == .testFailed)
    }
    #expect(document == original)
    #expect(document.objectValue?.keys == original.objectValue?.keys)
    #expect(document["b"]?.objectValue?.keys == ["c"])
  }

  @Test func removedMemberComesBackAtItsPositionOnRollback() throws {
    let original: JSON = ["a": 1, "b": 2, "c": 3]
    var document = original
    let patch = JSONPatch([.remove(path: "/b"), .remove(path: "/missing")])
    #expect(throws: JSONPatchError.self) { try patch.apply(to: &document) }
    #expect(document.objectValue?.keys == ["a", "b", "c"])
    #expect(document == original)
  }

  /// The last operation keeps no undo entry unless it edits twice: a `move` whose add fails
  /// after its remove succeeded must still put the member back where it was.
  @Test func failedMoveAsTheLastOperationPutsItsSourceBack() {
    let original: JSON = ["a": 1, "b": 2, "c": 3]
    var document = original
    let patch = JSONPatch([.replace(path: "/c", value: 4), .move(from: "/a", path: "/none/a")])
    #expect(throws: JSONPatchError.self) { try patch.apply(to: &document) }
    #expect(document == original)
    #expect(document.objectValue?.keys == ["a", "b", "c"])
  }

  @Test func failedLastOperationUndoesTheEarlierOnes() {
    let original: JSON = ["a": 1, "b": [1, 2]]
    var document = original
    let patch = JSONPatch([
      .remove(path: "/a"), .add(path: "/b/-", value: 3), .replace(path: "/x", value: 0),
    ])
    #expect(throws: JSONPatchError.self) { try patch.apply(to: &document) }
    #expect(document == original)
    #expect(document.objectValue?.keys == ["a", "b"])
  }

  @Test func errorsNameTheOperationAndTheReason() {
    let document: JSON = ["list": [1, 2], "s": "text"]
    let cases: [(JSONPatch.Operation, JSONPatchError.Kind, String)] = [
      (.remove(path: "/nope"), .pathNotFound, "no member \"nope\""),
      (.replace(path: "/list/2", value: 0), .invalidIndex, "out of range"),
      (.add(path: "/list/3", value: 0), .invalidIndex, "out of range"),
      (.add(path: "/list/01", value: 0), .invalidIndex, "leading zero"),
      (.remove(path: "/list/-"), .invalidIndex, "past the end"),
      (.add(path: "/list/x", value: 0), .invalidIndex, "not an array index"),
      (.add(path: "/s/x", value: 0), .pathNotFound, "a string"),
      (.add(path: "/a/b", value: 0), .pathNotFound, "no member \"a\""),
      (.move(from: "/list", path: "/list/0"), .moveIntoChild, "its own child"),
      (.copy(from: "/x", path: "/y"), .pathNotFound, "no member \"x\""),
      (.test(path: "/list", value: [1]), .testFailed, "test failed"),
    ]
    for (operation, kind, fragment) in cases {
      do {
        _ = try JSONPatch([.test(path: "/s", value: "text"), operation]).applied(to: document)
        Issue.record("\(operation) should fail")
      } catch {
        #expect(error.operationIndex == 1, "\(operation)")
        #expect(error.kind == kind, "\(operation): \(error)")
        #expect(error.reason.contains(fragment), "\(operation): \(error.reason)")
        #expect(error.description.contains("operation 1"))
      }
    }
  }

  @Test func moveToItselfIsANoOpButFromMustExist() throws {
    let document: JSON = ["a": [1]]
    #expect(try JSONPatch([.move(from: "/a", path: "/a")]).applied(to: document) == document)
    #expect(throws: JSONPatchError.self) {
      try JSONPatch([.move(from: "/b", path: "/b")]).applied(to: document)
    }
  }

  @Test func testComparesNumbersByValueAndObjectsWithoutOrder() throws {
    let document: JSON = ["n": 1, "d": 2.5, "o": ["a": 1, "b": [1, 2.0]]]
    let passing = JSONPatch([
      .test(path: "/n", value: 1.0),
      .test(path: "/d", value: 2.5),
      .test(path: "/o", value: ["b": [1.0, 2], "a": 1]),
    ])
    #expect(try passing.applied(to: document) == document)
    for wrong: JSON in [["b": [2, 1], "a": 1], ["a": 1], ["a": 1, "b": [1, 2], "c": 3]] {
      #expect(throws: JSONPatchError.self) {
        try JSONPatch([.test(path: "/o", value: wrong)]).applied(to: document)
      }
    }
    #expect(!JSON.integer(9_007_199_254_740_993).equalsByValue(.double(9_007_199_254_740_992)))
    #expect(!JSON.integer(1).equalsByValue(.string("1")))
    #expect(!JSON.double(.nan).equalsByValue(.double(.nan)))
  }

  /// The store keeps its last published document and applies each patch to it: an edit deep
  /// inside a large array must happen where the array lies, not in a copy of it.
  @Test func replaceInsideLargeArrayDoesNotCopyTheArray() throws {
    func itemsAddress(_ document: JSON) -> UInt? {
      guard case .array(let items)? = document["items"] else { return nil }
      return items.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) }
    }
    var document: JSON = [
      "items": .array((0..<100_000).map { ["id": .integer(Int64($0)), "v": 0] })
    ]
    let before = try #require(itemsAddress(document))
    let patch = JSONPatch([
      .replace(path: "/items/5000/v", value: 1),
      .add(path: "/items/6000/w", value: true),
      .remove(path: "/items/7000/v"),
    ])
    try patch.apply(to: &document)
    #expect(itemsAddress(document) == before)
    #expect(document["items"]?[5000]?["v"] == 1)
    #expect(document["items"]?[6000]?["w"] == true)
    #expect(document["items"]?[7000]?["v"] == nil)
  }

  @Test func appliedLeavesTheOriginalAlone() throws {
    let document: JSON = ["a": [1, 2]]
    let result = try JSONPatch([.add(path: "/a/-", value: 3)]).applied(to: document)
    #expect(result == ["a": [1, 2, 3]])
    #expect(document == ["a": [1, 2]])
  }

  /// Rollback, property-style: every generated diff (adds, removes, replaces, moves), plus a
  /// copy, followed by a failing test, leaves the document byte for byte as it was.
  @Test func failedPatchRollsBackEveryGeneratedEdit() throws {
    var rolledBack = 0
    for seed in 0..<1_000 {
      var generator = DocumentPairGenerator(seed: UInt64(seed))
      let (old, new) = generator.pair()
      var operations = JSONPatch.diff(from: old, to: new).operations
      guard !operations.isEmpty else { continue }
      operations.append(.copy(from: "", path: "/copied"))
      operations.append(.test(path: "", value: "not the document"))
      let before = try old.serialized()
      var document = old
      #expect(throws: JSONPatchError.self) { try JSONPatch(operations).apply(to: &document) }
      #expect(try document.serialized() == before, "seed \(seed)")
      rolledBack += 1
    }
    #expect(rolledBack > 500)
  }
}

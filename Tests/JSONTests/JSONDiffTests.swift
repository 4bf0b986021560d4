import Testing

@testable import JSON

/// The minimality promises of issue 3, each with the exact expected patch.
@Suite struct JSONDiffTests {
  /// Items with several fields, so that replacing one field is clearly smaller than the item.
  static func item(_ id: Int, name: String? = nil, done: Bool = false) -> JSON {
    [
      "id": .integer(Int64(id)), "name": .string(name ?? "item \(id)"), "done": .bool(done),
      "tags": ["a", "b"],
    ]
  }

  static func items(_ ids: some Sequence<Int>) -> [JSON] { ids.map { item($0) } }

  func expectDiff(
    _ old: JSON, _ new: JSON, is expected: [JSONPatch.Operation],
    sourceLocation: SourceLocation = #_sourceLocation
  ) throws {
    let patch = JSONPatch.diff(from: old, to: new)
    #expect(patch.operations == expected, sourceLocation: sourceLocation)
    #expect(try patch.applied(to: old) == new, sourceLocation: sourceLocation)
  }

  @Test func unchangedDocumentsGiveNoOperations() throws {
    let document: JSON = ["a": [1, 2, ["b": nil]], "c": "d"]
    try expectDiff(document, document, is: [])
    // Equal but separately built: still nothing.
    try expectDiff(document, ["c": "d", "a": [1, 2, ["b": nil]]], is: [])
  }

  @Test func changedScalarIsOneReplace() throws {
    try expectDiff(
      ["a": ["b": 1, "c": 2]], ["a": ["b": 1, "c": 3]],
      is: [
        .replace(path: "/a/c", value: 3)
      ])
    // A type change is a change, even when the numbers are equal by value.
    try expectDiff(
      ["n": 1, "x": "unchanged member"], ["n": 1.0, "x": "unchanged member"],
      is: [
        .replace(path: "/n", value: 1.0)
      ])
    try expectDiff(1, "1", is: [.replace(path: "", value: "1")])
  }

  @Test func addedAndRemovedMembersAreOneOperationEach() throws {
    let base: JSON = ["keep": "a long enough value to be worth keeping", "old": 1]
    try expectDiff(
      base, ["keep": "a long enough value to be worth keeping", "old": 1, "new": 2],
      is: [.add(path: "/new", value: 2)])
    try expectDiff(
      base, ["keep": "a long enough value to be worth keeping"],
      is: [
        .remove(path: "/old")
      ])
    try expectDiff(
      ["a/b": ["~": 1, "x": "some other member"]],
      ["a/b": ["~": 2, "x": "some other member"]],
      is: [.replace(path: "/a~1b/~0", value: 2)])
  }

  @Test func oneChangedFieldOfALargeKeyedArrayIsOneReplace() throws {
    let old: JSON = ["items": .array(Self.items(0..<100_000))]
    var new = old
    new["items"] = .array(
      Self.items(0..<100_000).enumerated().map { index, element in
        index == 54_321 ? Self.item(54_321, done: true) : element
      })
    try expectDiff(old, new, is: [.replace(path: "/items/54321/done", value: true)])
  }

  /// As a store produces it: the new state is the old one with one element written, so every
  /// other element shares its storage (decided by the bitwise check, not by `==`).
  @Test func oneChangedFieldOfASharedLargeKeyedArrayIsOneReplace() throws {
    let old: JSON = ["items": .array(Self.items(0..<100_000)), "title": "list"]
    var new = old
    guard case .array(var items)? = new["items"] else { return }
    items[99_999] = Self.item(99_999, name: "last")
    items[0] = Self.item(0, done: true)
    new["items"] = .array(items)
    try expectDiff(
      old, new,
      is: [
        .replace(path: "/items/0/done", value: true),
        .replace(path: "/items/99999/name", value: "last"),
      ])
  }

  @Test func frontInsertIntoALargeKeyedArrayIsOneAdd() throws {
    let old: JSON = ["items": .array(Self.items(0..<100_000))]
    let new: JSON = ["items": .array([Self.item(-1)] + Self.items(0..<100_000))]
    try expectDiff(old, new, is: [.add(path: "/items/0", value: Self.item(-1))])
  }

  @Test func removedElementIsOneRemove() throws {
    let old: JSON = ["items": .array(Self.items(0..<1_000))]
    let new: JSON = ["items": .array(Self.items((0..<1_000).filter { $0 != 500 }))]
    try expectDiff(old, new, is: [.remove(path: "/items/500")])
  }

  @Test func swappedElementsCostAtMostTwoOperations() throws {
    var ids = Array(0..<1_000)
    ids.swapAt(100, 900)
    let old: JSON = ["items": .array(Self.items(0..<1_000))]
    let new: JSON = ["items": .array(Self.items(ids))]
    let patch = JSONPatch.diff(from: old, to: new)
    #expect(patch.operations.count <= 2)
    #expect(patch.operations.allSatisfy { if case .move = $0 { true } else { false } })
    #expect(try patch.applied(to: old) == new)
    // Neighbours: one move.
    try expectDiff(
      ["items": .array(Self.items([1, 2, 3]))], ["items": .array(Self.items([2, 1, 3]))],
      is: [.move(from: "/items/0", path: "/items/1")])
  }

  @Test func movedAndEditedElementIsAMoveThenAnEditInPlace() throws {
    let old: JSON = ["items": .array(Self.items(0..<10))]
    var ids = Array(0..<10)
    ids.remove(at: 7)
    ids.insert(7, at: 2)
    var newItems = Self.items(ids)
    newItems[2] = Self.item(7, name: "renamed")
    try expectDiff(
      old, ["items": .array(newItems)],
      is: [
        .move(from: "/items/7", path: "/items/2"),
        .replace(path: "/items/2/name", value: "renamed"),
      ])
  }

  @Test func unkeyedArraysDiffByCommonSubsequence() throws {
    let numbers = Array(0..<50).map { JSON.integer(Int64($0)) }
    var inserted = numbers
    inserted.insert("new", at: 10)
    try expectDiff(.array(numbers), .array(inserted), is: [.add(path: "/10", value: "new")])
    var removed = numbers
    removed.remove(at: 20)
    try expectDiff(.array(numbers), .array(removed), is: [.remove(path: "/20")])
    var edited = numbers
    edited[30] = 300
    try expectDiff(.array(numbers), .array(edited), is: [.replace(path: "/30", value: 300)])
  }

  @Test func patchNeverOutweighsReplacingTheWholeDocument() throws {
    let old: JSON = ["a": [1, 2, 3], "b": 1]
    let new: JSON = ["c": [4, 5, 6], "d": 2]
    try expectDiff(old, new, is: [.replace(path: "", value: new)])
    // And per subtree: rewriting every element of a small array is one replace of it.
    try expectDiff(
      ["list": [1, 2, 3], "keep": "a value long enough to keep"],
      ["list": [7, 8, 9], "keep": "a value long enough to keep"],
      is: [.replace(path: "/list", value: [7, 8, 9])])
  }

  /// Python's `jsonpatch` 1.33 refuses `{"op":"replace","path":"/-"}` even on an object; found
  /// by tests/test_patch_jsonpatch.py.
  @Test func changedMemberNamedDashIsAnAddThatPythonJsonpatchAccepts() throws {
    try expectDiff(
      ["-": 1, "keep": "a value long enough to keep"],
      ["-": 2, "keep": "a value long enough to keep"],
      is: [.add(path: "/-", value: 2)])
  }

  @Test func sharedStorageIsEqualWithoutAWalk() {
    let elements: [JSON] = Self.items(0..<10)
    #expect(JSON.sharesStorage(elements, elements))
    #expect(!JSON.sharesStorage(elements, Self.items(0..<10)))
    let object = JSONObject([("a", 1), ("b", 2)])
    #expect(JSON.sharesStorage(object, object))
    #expect(!JSON.sharesStorage(object, JSONObject([("a", 1), ("b", 2)])))
  }
}

import Testing

@testable import JSON

/// `scoped(to:in:)`: what a subscriber to one subtree receives (docs/reference/protocol.md,
/// `state/patch`).
@Suite struct JSONPatchScopeTests {
  static let document: JSON = [
    "a": ["x": 1, "list": [10, 20, 30]],
    "b": 2,
    "items": [["id": 1, "v": 1], ["id": 2, "v": 2], ["id": 3, "v": 3]],
  ]

  func scoped(_ operations: [JSONPatch.Operation], to path: JSONPointer) throws -> [JSONPatch
    .Operation]?
  {
    let patch = JSONPatch(operations)
    let new = try patch.applied(to: Self.document)
    return patch.scoped(to: path, in: new)?.operations
  }

  @Test func operationsOutsideAreDroppedAndInsideKeptWithRootPaths() throws {
    let operations: [JSONPatch.Operation] = [
      .replace(path: "/b", value: 3),
      .replace(path: "/a/x", value: 2),
      .add(path: "/a/list/-", value: 40),
      .add(path: "/c", value: true),
    ]
    #expect(
      try scoped(operations, to: "/a") == [
        .replace(path: "/a/x", value: 2), .add(path: "/a/list/-", value: 40),
      ])
    #expect(try scoped(operations, to: "/b") == [.add(path: "/b", value: 3)])
    #expect(try scoped(operations, to: "/items") == nil)
    // Prefixes by token: "/a" is not inside "/ab".
    #expect(try scoped([.add(path: "/ab", value: 1)], to: "/a") == nil)
  }

  @Test func operationOnAnAncestorBecomesOneOperationOnThePath() throws {
    #expect(
      try scoped(
        [.replace(path: "/a", value: ["x": 5]), .replace(path: "/a/x", value: 6)], to: "/a/x")
        == [.add(path: "/a/x", value: 6)])
    #expect(try scoped([.remove(path: "/a")], to: "/a/list") == [.remove(path: "/a/list")])
    // The path is an array element: `replace` (an `add` would insert).
    #expect(
      try scoped([.replace(path: "/items", value: [["id": 9]])], to: "/items/0")
        == [.replace(path: "/items/0", value: ["id": 9])])
    #expect(
      try scoped([.replace(path: "", value: ["a": 1])], to: "/a") == [.add(path: "/a", value: 1)])
  }

  @Test func shiftingAnArrayBeforeThePathReplacesIt() throws {
    // Inserting at 0 makes "/items/1" another element: the subscriber gets its new value.
    #expect(
      try scoped([.add(path: "/items/0", value: ["id": 0])], to: "/items/1")
        == [.replace(path: "/items/1", value: ["id": 1, "v": 1])])
    #expect(
      try scoped([.remove(path: "/items/0")], to: "/items/1")
        == [.replace(path: "/items/1", value: ["id": 3, "v": 3])])
    // After the path, or appended: nothing changes for it.
    #expect(try scoped([.remove(path: "/items/2")], to: "/items/1") == nil)
    #expect(try scoped([.add(path: "/items/-", value: 4)], to: "/items/1") == nil)
    // Removing the last element subscribed to: a remove.
    #expect(try scoped([.remove(path: "/items/2")], to: "/items/2") == [.remove(path: "/items/2")])
  }

  @Test func movesAndCopiesAcrossTheBoundary() throws {
    // Inside to inside: kept.
    #expect(
      try scoped([.move(from: "/a/list/0", path: "/a/list/2")], to: "/a")
        == [.move(from: "/a/list/0", path: "/a/list/2")])
    // Inside to outside: a removal inside.
    #expect(try scoped([.move(from: "/a/x", path: "/b")], to: "/a") == [.remove(path: "/a/x")])
    // Outside to inside: the subscriber lacks the value, so it gets the whole subtree.
    let whole: JSON = ["x": 1, "list": [10, 20, 30], "y": 2]
    #expect(
      try scoped([.move(from: "/b", path: "/a/y")], to: "/a") == [.add(path: "/a", value: whole)])
    #expect(
      try scoped([.copy(from: "/b", path: "/a/y")], to: "/a") == [.add(path: "/a", value: whole)])
    // Copy from inside to outside changes nothing inside.
    #expect(try scoped([.copy(from: "/a/x", path: "/c")], to: "/a") == nil)
    // Moving the subtree itself away.
    #expect(try scoped([.move(from: "/a", path: "/c")], to: "/a/x") == [.remove(path: "/a/x")])
  }

  @Test func testsOnlyTravelInside() throws {
    #expect(
      try scoped([.test(path: "/a/x", value: 1)], to: "/a") == [.test(path: "/a/x", value: 1)])
    #expect(try scoped([.test(path: "", value: Self.document)], to: "/a") == nil)
  }

  @Test func rootSubscriptionGetsTheWholePatch() throws {
    let operations: [JSONPatch.Operation] = [.replace(path: "/b", value: 3), .remove(path: "/a")]
    #expect(try scoped(operations, to: "") == operations)
    #expect(JSONPatch().scoped(to: .root, in: Self.document) == nil)
  }

  /// Regression (qa, 19:00): a subscription to "/items/0" while the cart emptied and refilled
  /// got `replace` of a location that did not exist; told whether it existed, scoped() says
  /// `add`, `replace` or `remove` exactly as RFC 6902 would need.
  @Test func theWholeChangeFollowsWhetherThePathExistedBefore() throws {
    let empty: JSON = ["items": []]
    let refilled: JSON = ["items": [["id": "b"]]]
    let refill = JSONPatch([.add(path: "/items/0", value: ["id": "b"])])
    #expect(
      refill.scoped(to: "/items/0", in: refilled, existedBefore: false)?.operations
        == [.add(path: "/items/0", value: ["id": "b"])])
    let swap = JSONPatch([.replace(path: "/items", value: [["id": "c"]])])
    #expect(
      swap.scoped(to: "/items/0", in: ["items": [["id": "c"]]], existedBefore: true)?.operations
        == [.replace(path: "/items/0", value: ["id": "c"])])
    let clear = JSONPatch([.replace(path: "/items", value: [])])
    #expect(
      clear.scoped(to: "/items/0", in: empty, existedBefore: true)?.operations
        == [.remove(path: "/items/0")])
    // Absent before and after: the subscriber hears nothing.
    #expect(clear.scoped(to: "/items/0", in: empty, existedBefore: false) == nil)
  }

  /// Property: a subscriber that holds only the old subtree at `path` and applies the scoped
  /// patch to it (paths made relative to `path`) ends with the new subtree, for the diffs of
  /// generated pairs and many paths of each old document.
  @Test func subscriberViewFollowsTheNewSubtree() throws {
    var checked = 0
    for seed in 0..<300 {
      var generator = DocumentPairGenerator(seed: UInt64(seed))
      let (old, new) = generator.pair()
      let patch = JSONPatch.diff(from: old, to: new)
      for path in Self.paths(in: old, limit: 40) where !path.isRoot {
        let view = try Self.subscriberView(
          after: patch.scoped(to: path, in: new), at: path, holding: path.value(in: old))
        #expect(view == path.value(in: new), "seed \(seed) \(path)")
        let strict = try Self.subscriberView(
          after: patch.scoped(to: path, in: new, existedBefore: true), at: path,
          holding: path.value(in: old), strict: true)
        #expect(strict == path.value(in: new), "seed \(seed) \(path), strict")
        checked += 1
      }
    }
    #expect(checked > 1_000)
  }

  /// What a subscriber to `path` holding `view` has after applying `patch`: an operation on
  /// `path` itself sets or removes the whole view, others apply inside it. `strict` holds the
  /// operations on `path` to RFC 6902: `add` only onto nothing, `replace` and `remove` only of
  /// something.
  static func subscriberView(
    after patch: JSONPatch?, at path: JSONPointer, holding view: JSON?, strict: Bool = false
  ) throws -> JSON? {
    var view = view
    for operation in patch?.operations ?? [] {
      func relative(_ pointer: JSONPointer) throws -> JSONPointer {
        try #require(path.isPrefix(of: pointer), "\(pointer) is outside \(path)")
        return JSONPointer(tokens: Array(pointer.tokens.dropFirst(path.tokens.count)))
      }
      let inner: JSONPatch.Operation
      switch operation {
      case .add(let target, let value), .replace(let target, let value):
        if target == path {
          if strict {
            try #require(
              (operation.name == "add") == (view == nil), "\(operation) onto \(view as Any)")
          }
          view = value
          continue
        }
        inner =
          operation.name == "add"
          ? .add(path: try relative(target), value: value)
          : .replace(path: try relative(target), value: value)
      case .remove(let target):
        if target == path {
          if strict { try #require(view != nil, "remove of an absent \(path)") }
          view = nil
          continue
        }
        inner = .remove(path: try relative(target))
      case .move(let from, let target):
        inner = .move(from: try relative(from), path: try relative(target))
      case .copy(let from, let target):
        inner = .copy(from: try relative(from), path: try relative(target))
      case .test(let target, let value):
        inner = .test(path: try relative(target), value: value)
      }
      var current = try #require(view, "an operation inside \(path), which is absent")
      try JSONPatch([inner]).apply(to: &current)
      view = current
    }
    return view
  }

  static func paths(in value: JSON, limit: Int) -> [JSONPointer] {
    var found: [JSONPointer] = []
    func visit(_ value: JSON, _ path: JSONPointer) {
      guard found.count < limit else { return }
      found.append(path)
      switch value {
      case .object(let object):
        for (key, member) in object.members { visit(member, path.appending(key)) }
      case .array(let elements):
        for (index, element) in elements.enumerated() {
          visit(element, path.appending(index: index))
        }
      default: break
      }
    }
    visit(value, .root)
    return found
  }
}

import Testing

@testable import JSON

@Suite struct JSONPatchWireFormTests {
  @Test func decodesEveryOperationAndWritesItBackInFieldOrder() throws {
    let wire: JSON = [
      ["op": "add", "path": "/a", "value": 1],
      ["op": "remove", "path": "/b"],
      ["value": ["x": nil], "path": "/c", "op": "replace"],
      ["op": "move", "from": "/d", "path": "/e"],
      ["op": "copy", "from": "/f", "path": "/g~1h"],
      ["op": "test", "path": "/i", "value": nil, "ignored": true],
    ]
    let patch = try JSONPatch(json: wire)
    #expect(
      patch.operations == [
        .add(path: "/a", value: 1),
        .remove(path: "/b"),
        .replace(path: "/c", value: ["x": nil]),
        .move(from: "/d", path: "/e"),
        .copy(from: "/f", path: "/g~1h"),
        .test(path: "/i", value: nil),
      ])
    let written = patch.json
    #expect(written[2]?.objectValue?.keys == ["op", "path", "value"])
    #expect(written[3]?.objectValue?.keys == ["op", "path", "from"])
    #expect(written[4]?["path"] == "/g~1h")
    #expect(try JSONPatch(json: written) == patch)
  }

  @Test func malformedOperationsNameTheIndexAndField() {
    let cases: [(JSON, Int?, String?)] = [
      (["op": "add"], nil, nil),
      ([["op": "add", "path": "/a"]], 0, "value"),
      ([["op": "remove", "path": "/a"], ["path": "/a"]], 1, "op"),
      ([["op": "spam", "path": "/a"]], 0, "op"),
      ([["op": 1, "path": "/a"]], 0, "op"),
      ([["op": "remove", "path": 1]], 0, "path"),
      ([["op": "remove", "path": "a"]], 0, "path"),
      ([["op": "remove"]], 0, "path"),
      ([["op": "move", "path": "/a"]], 0, "from"),
      ([["op": "copy", "path": "/a", "from": "x~"]], 0, "from"),
      ([1], 0, nil),
    ]
    for (wire, index, field) in cases {
      do {
        _ = try JSONPatch(json: wire)
        Issue.record("\(wire) should not decode")
      } catch {
        #expect(error.kind == .malformed)
        #expect(error.operationIndex == index, "\(wire)")
        #expect(error.field == field, "\(wire)")
        #expect(!error.reason.isEmpty)
      }
    }
  }

  @Test func serializedSizeMatchesTheWrittenForm() {
    let patch = JSONPatch([
      .replace(path: "/a~1b/0", value: ["k\"ey": "line\nbreak\u{1}", "n": -12, "d": 0.5]),
      .remove(path: "/x"),
      .move(from: "/é", path: "/y"),
    ])
    let expected =
      #"[{"op":"replace","path":"/a~1b/0","value":{"k\"ey":"line\nbreak\u0001","n":-12,"d":0.5}},"#
      + #"{"op":"remove","path":"/x"},{"op":"move","path":"/y","from":"/é"}]"#
    #expect(patch.serializedSize == expected.utf8.count)
    #expect(JSONPatch().serializedSize == 2)
  }

  @Test func hasPathComparesTheWrittenPathOfEveryKind() {
    let operations: [JSONPatch.Operation] = [
      .add(path: "/a", value: 1), .remove(path: "/a"), .replace(path: "/a", value: 2),
      .move(from: "/b", path: "/a"), .copy(from: "/b", path: "/a"), .test(path: "/a", value: 3),
    ]
    for operation in operations {
      #expect(operation.hasPath("/a"))
      #expect(!operation.hasPath("/b"))
      #expect(operation.json(pathText: "/a") == operation.json)
    }
  }
}

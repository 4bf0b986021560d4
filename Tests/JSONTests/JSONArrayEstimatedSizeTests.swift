import JSON
import Testing

@Suite struct JSONArrayEstimatedSizeTests {
  /// The elements' share is the array's estimate without its two brackets, whatever the
  /// elements: objects of scalars (counted in place), deeper values, scalars.
  @Test(arguments: [
    [] as [JSON],
    [["op": "replace", "path": "/count", "value": 7]],
    [
      ["op": "add", "path": "/items/-", "value": ["id": "sku-7", "tags": ["a", "b"]]],
      ["op": "remove", "path": "/items/0"],
      ["op": "replace", "path": "/flag", "value": true],
      ["op": "replace", "path": "/ratio", "value": 0.5],
      ["op": "replace", "path": "/gone", "value": .null],
    ],
    [1, "text", .null, false, 2.5, [1, 2], [:], ["nested": ["deep": [1]]]],
  ])
  func theElementsShareIsTheArraysEstimateWithoutItsBrackets(_ elements: [JSON]) {
    #expect(
      elements.estimatedEncodedSizeOfElements == JSON.array(elements).estimatedEncodedSize - 2)
  }
}

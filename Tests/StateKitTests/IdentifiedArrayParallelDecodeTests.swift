import JSON
import StateKit
import Testing

/// An `IdentifiedArray` large enough to be decoded on two threads (`ParallelDecodedArray`, its
/// threshold lowered to keep the arrays small) and indexed on two (`PositionIndex`): the same
/// array, and the same errors, as the sequential decode.
@Suite struct IdentifiedArrayParallelDecodeTests {
  struct Item: Codable, Equatable, Sendable, Identifiable {
    var id: Int
    var name: String
  }

  struct Shelf: Codable, Equatable, Sendable {
    var items: IdentifiedArray<Item>
  }

  /// `ids` as a shelf's items, named after their positions.
  func shelf(_ ids: [Int]) -> JSON {
    [
      "items": .array(
        ids.enumerated().map { ["id": .integer(Int64($1)), "name": .string("n\($0)")] })
    ]
  }

  /// The sequential decode of `make()`, then the borrowing and the consuming decode on two
  /// threads.
  func decodes(_ make: () -> JSON) -> [Result<Shelf, JSONDecodingError>] {
    var results: [Result<Shelf, JSONDecodingError>] = []
    for threshold in [Int.max, 32] {
      // The index is split at the same size (`PositionIndex`).
      ParallelDecoding.$threshold.withValue(threshold) {
        PositionIndexSplit.$threshold.withValue(threshold) {
          let json = make()
          results.append(
            Result { () throws(JSONDecodingError) in
              try JSONValueDecoder().decode(Shelf.self, from: json)
            })
          if threshold != .max {
            results.append(
              Result { () throws(JSONDecodingError) in
                try JSONValueDecoder().decode(Shelf.self, consuming: make())
              })
          }
        }
      }
    }
    return results
  }

  @Test func theSameElementsOrderAndIndex() throws {
    let ids = (0..<257).map { ($0 * 7919) % 1000 }
    let results = decodes { shelf(ids) }
    let sequential = try results[0].get()
    #expect(sequential.items.ids == ids)
    for result in results.dropFirst() {
      let shelf = try result.get()
      #expect(shelf == sequential)
      #expect(shelf.items.ids == ids)
      #expect(shelf.items.index(id: ids[200]) == 200)
      #expect(shelf.items[id: ids[3]]?.name == "n3")
    }
  }

  /// Every decode fails as the sequential one does.
  func expectSameError(_ make: () -> JSON, at pointer: String) {
    let results = decodes(make)
    guard case .failure(let wanted) = results[0] else {
      Issue.record("expected the sequential decode to fail")
      return
    }
    #expect(wanted.pointer == pointer)
    for result in results.dropFirst() { #expect(throws: wanted) { try result.get() } }
  }

  @Test func anIdRepeatedAcrossTheHalvesIsTheSameError() {
    // Ids 0..<100, then the id at 10 again at 90: each half's ids are distinct.
    expectSameError({ shelf(Array(0..<90) + [10] + Array(91..<100)) }, at: "/items")
  }

  @Test func aFailingElementInTheSecondHalf() {
    expectSameError(
      {
        guard case .object(let members) = shelf(Array(0..<100)),
          case .array(var items)? = members["items"]
        else { return .null }
        items[80] = ["id": "eighty", "name": "n80"]
        return ["items": .array(items)]
      }, at: "/items/80/id")
  }
}

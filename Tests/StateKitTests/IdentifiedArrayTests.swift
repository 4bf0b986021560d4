import JSON
import StateKit
import Testing

@Suite struct IdentifiedArrayTests {
  struct Item: Codable, Equatable, Sendable, Identifiable {
    var id: Int
    var name: String
  }

  @Test func findsElementsByIdAndKeepsTheirOrder() {
    var items: IdentifiedArray<Item> = [Item(id: 3, name: "c"), Item(id: 1, name: "a")]
    items.append(Item(id: 2, name: "b"))
    items.insert(Item(id: 0, name: "z"), at: 0)
    #expect(items.ids == [0, 3, 1, 2])
    #expect(items[id: 1]?.name == "a")
    #expect(items.index(id: 2) == 3)
    items[id: 1]?.name = "A"
    items.modify(id: 3) { $0.name = "C" }
    #expect(items.map(\.name) == ["z", "C", "A", "b"])
    items.remove(id: 3)
    items[id: 0] = nil
    #expect(items.ids == [1, 2])
    #expect(items.index(id: 2) == 1)
    items.append(Item(id: 1, name: "replaced"))  // same id: replaced in place
    #expect(items.ids == [1, 2])
    #expect(items[id: 1]?.name == "replaced")
    items.sort { $0.id > $1.id }
    #expect(items.ids == [2, 1])
    #expect(items.index(id: 1) == 1)
    items.removeAll(where: { $0.id == 2 })
    #expect(items.ids == [1])
    items.removeAll()
    #expect(items.isEmpty)
  }

  @Test func aRepeatedIdInASequenceKeepsTheLastElementAtTheFirstPosition() {
    var items = IdentifiedArray([
      Item(id: 1, name: "a"), Item(id: 2, name: "b"), Item(id: 1, name: "A"),
      Item(id: 3, name: "c"),
    ])
    #expect(items.ids == [1, 2, 3])
    #expect(items.map(\.name) == ["A", "b", "c"])
    #expect(items.index(id: 3) == 2)
    items.modify(id: 3) { $0.name = "C" }
    #expect(items[id: 3]?.name == "C")
  }

  @Test func encodesAsAPlainArrayAndRefusesRepeatedIds() throws {
    let items: IdentifiedArray<Item> = [Item(id: 1, name: "a")]
    let json = try JSONValueEncoder().encode(items)
    #expect(json == [["id": 1, "name": "a"]])
    #expect(try JSONValueDecoder().decode(IdentifiedArray<Item>.self, from: json) == items)
    #expect(throws: JSONDecodingError.self) {
      try JSONValueDecoder().decode(
        IdentifiedArray<Item>.self, from: [["id": 1, "name": "a"], ["id": 1, "name": "b"]])
    }
  }

  @Test func copiesAreValuesAndCompareByContent() {
    let original: IdentifiedArray<Item> = [Item(id: 1, name: "a")]
    var copy = original
    #expect(copy == original)
    copy[id: 1]?.name = "b"
    #expect(copy != original)
    #expect(original[id: 1]?.name == "a")
    copy[id: 1]?.name = "a"
    #expect(copy == original)  // equal content, different histories
  }
}

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

  /// Elements are kept in chunks (ChunkedElements): inserts, removals and edits on both sides
  /// of chunk boundaries, of an array and of a copy of it, against a plain array.
  @Test func editsAcrossChunkBoundariesMatchAPlainArrayAndLeaveCopiesAlone() throws {
    var items = IdentifiedArray((0..<3000).map { Item(id: $0, name: "\($0)") })
    var model = (0..<3000).map { Item(id: $0, name: "\($0)") }
    var generator = SplitMix(seed: 28)
    var nextID = 3000
    for step in 0..<600 {
      let kept = items
      let keptModel = model
      let position = Int(generator.next() % UInt64(model.count + 1))
      switch step % 4 {
      case 0:
        let item = Item(id: nextID, name: "new \(step)")
        nextID += 1
        items.insert(item, at: position)
        model.insert(item, at: position)
      case 1 where position < model.count:
        #expect(items.remove(at: position) == model.remove(at: position))
      case 2 where position < model.count:
        items.modify(id: model[position].id) { $0.name = "edited \(step)" }
        model[position].name = "edited \(step)"
      default:
        let item = Item(id: nextID, name: "appended \(step)")
        nextID += 1
        items.append(item)
        model.append(item)
      }
      #expect(Array(items) == model, "step \(step)")
      #expect(kept.elementsArray == keptModel, "the copy before step \(step)")
    }
    for (position, item) in model.enumerated() {
      #expect(items.index(id: item.id) == position)
    }
    #expect(items == IdentifiedArray(model))
    #expect(try JSONValueEncoder().encode(items) == JSONValueEncoder().encode(model))
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

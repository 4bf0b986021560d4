import JSON
import Testing

@testable import StateKit

/// The index of an `IdentifiedArray` decoded large is split in two dictionaries built on two
/// threads (`PositionIndex`; its threshold lowered here to keep the arrays small): it stays the
/// index of the elements through every edit, and a repeated id is the same error as before.
@Suite struct IdentifiedArraySplitIndexTests {
  struct Item: Codable, Equatable, Sendable, Identifiable {
    var id: Int
    var name: String
  }

  static let threshold = 16

  /// `items` encoded and decoded with the index's threshold lowered to `threshold`.
  func decoded(_ items: [Item], threshold: Int = Self.threshold) throws -> IdentifiedArray<Item> {
    let json = try JSONValueEncoder().encode(items)
    return try PositionIndexSplit.$threshold.withValue(threshold) {
      try JSONValueDecoder().decode(IdentifiedArray<Item>.self, from: json)
    }
  }

  /// The error of decoding `ids` as items with the given threshold, or `nil`.
  func decodingError(_ ids: [Int], threshold: Int) -> JSONDecodingError? {
    let json = JSON.array(ids.map { ["id": .integer(Int64($0)), "name": "x"] })
    return PositionIndexSplit.$threshold.withValue(threshold) { () -> JSONDecodingError? in
      do throws(JSONDecodingError) {
        _ = try JSONValueDecoder().decode(
          [String: IdentifiedArray<Item>].self, from: ["items": json])
        return nil
      } catch {
        return error
      }
    }
  }

  @Test func aDecodedArrayAtTheThresholdIsSplitBelowItIsNot() throws {
    let items = (0..<Self.threshold).map { Item(id: $0, name: "\($0)") }
    let split = try decoded(items)
    #expect(split.isIndexSplit)
    #expect(split.indexMatchesElements)
    // Both dictionaries hold ids.
    #expect(items.contains { PositionIndex<Int>.isInSecond($0.id) })
    #expect(items.contains { !PositionIndex<Int>.isInSecond($0.id) })
    let whole = try decoded(Array(items.dropLast()))
    #expect(!whole.isIndexSplit)
    #expect(whole.indexMatchesElements)
    #expect(split.elementsArray == items)
  }

  /// Random sequences of every edit on split arrays, against a plain array: the same elements,
  /// an index that holds exactly their positions, and a copy taken before each edit unchanged.
  @Test(arguments: [1, 2, 3])
  func theIndexFollowsEveryEdit(seed: UInt64) throws {
    var generator = SplitMix(seed: seed)
    var nextID = 0
    func fresh(_ count: Int) -> [Item] {
      defer { nextID += count }
      return (nextID..<nextID + count).map { Item(id: $0, name: "n\($0)") }
    }
    var model = fresh(200)
    var items = try decoded(model)
    #expect(items.isIndexSplit)
    for step in 0..<1_500 {
      let kept = items
      let keptModel = model
      let position = Int(generator.next() % UInt64(model.count + 1))
      // An id in the array, or when it is empty one that `fresh` never makes.
      let existing = model.isEmpty ? -1 : model[position % model.count].id
      let edit = generator.next() % 14
      switch edit {
      case 0, 1:
        let item =
          generator.next() % 4 == 0 ? Item(id: existing, name: "moved \(step)") : fresh(1)[0]
        items.insert(item, at: position)
        if let old = model.firstIndex(where: { $0.id == item.id }) { model.remove(at: old) }
        model.insert(item, at: Swift.min(position, model.count))
      case 2:
        let item = fresh(1)[0]
        items.append(item)
        model.append(item)
      case 3:
        let item = Item(id: existing, name: "updated \(step)")
        let old = items.updateOrAppend(item)
        if let at = model.firstIndex(where: { $0.id == item.id }) {
          #expect(old == model[at])
          model[at] = item
        } else {
          #expect(old == nil)
          model.append(item)
        }
      case 4, 5:
        #expect(
          items.remove(id: existing)
            == model.firstIndex { $0.id == existing }.map {
              model.remove(at: $0)
            })
      case 6 where position < model.count:
        #expect(items.remove(at: position) == model.remove(at: position))
      case 7:
        let divisor = Int(generator.next() % 5) + 7
        items.removeAll { $0.id % divisor == 0 }
        model.removeAll { $0.id % divisor == 0 }
      case 8:
        let descending = generator.next() % 2 == 0
        items.sort {
          descending ? $0.id > $1.id : $0.name < $1.name || ($0.name == $1.name && $0.id < $1.id)
        }
        model.sort {
          descending ? $0.id > $1.id : $0.name < $1.name || ($0.name == $1.name && $0.id < $1.id)
        }
      case 9 where !model.isEmpty:
        let newID = fresh(1)[0].id
        items.modify(id: existing) { $0.id = newID }
        if let at = model.firstIndex(where: { $0.id == existing }) { model[at].id = newID }
      case 10:
        items.modify(id: existing) { $0.name = "edited \(step)" }
        if let at = model.firstIndex(where: { $0.id == existing }) {
          model[at].name = "edited \(step)"
        }
      case 11:
        items[id: existing] = nil
        model.removeAll { $0.id == existing }
      case 12 where generator.next() % 20 == 0:
        items.removeAll()
        model.removeAll()
        #expect(!items.isIndexSplit)
      case 13 where model.count < Self.threshold * 2:
        // Decoded again, so that most of the steps edit a split index.
        model += fresh(200)
        items = try decoded(model)
        #expect(items.isIndexSplit)
      default:
        break
      }
      #expect(Array(items) == model, "step \(step), edit \(edit)")
      #expect(items.indexMatchesElements, "step \(step), edit \(edit)")
      #expect(items.index(id: nextID) == nil)
      #expect(kept.elementsArray == keptModel, "the copy before step \(step)")
      #expect(kept.indexMatchesElements, "the copy before step \(step)")
    }
  }

  /// A repeated id is refused, whichever dictionary it goes to and wherever the two elements
  /// are, with the error of the index built on one thread.
  @Test func aRepeatedIdIsTheSameErrorInEitherDictionaryAndAnyHalves() throws {
    let count = Self.threshold * 4
    let middle = count / 2
    let ids = Array(0..<count)
    for inSecond in [false, true] {
      let repeated = try #require(ids.first { PositionIndex<Int>.isInSecond($0) == inSecond })
      let others = ids.filter { $0 != repeated }
      // (first, second) places of the repeated id: both in the first half, both in the
      // second, one in each.
      for (first, second) in [(1, middle - 2), (middle + 1, count - 1), (3, middle + 3)] {
        var withRepeat = others
        withRepeat.insert(repeated, at: first)
        withRepeat[second] = repeated
        let wanted = try #require(decodingError(withRepeat, threshold: .max))
        #expect(wanted.pointer == "/items")
        #expect(wanted.reason.contains("the ids of the elements repeat"))
        #expect(
          decodingError(withRepeat, threshold: Self.threshold) == wanted, "\(first), \(second)")
      }
    }
    #expect(decodingError(ids, threshold: Self.threshold) == nil)
  }
}

import JSON
import Testing

/// Containers whose values outgrow the parser's first stack (more than a megabyte of pending
/// values, where `PendingValues` maps its own memory and gives it back behind a large array as
/// the array moves out): the values come out whole and in order, with the values pending
/// around them untouched, and a parse that fails inside such an array leaves nothing behind.
@Suite("Parsing: containers larger than the parser's first stack")
struct LargeContainerParseTests {
  static let count = 150_000  // 3.6 MB of pending values

  @Test func aLargeArrayBetweenPendingMembersComesOutWhole() throws {
    let numbers = (0..<Self.count).map(String.init).joined(separator: ",")
    let text = #"{"a":"before","b":[["x"],{"n":1},["# + numbers + #"]],"c":"after"}"#
    let value = try JSON(parsing: Array(text.utf8))
    #expect(value["a"] == "before")
    #expect(value["c"] == "after")
    let outer = value["b"]?.arrayValue ?? []
    #expect(outer.count == 3)
    #expect(outer.first == ["x"])
    let inner = outer.last?.arrayValue ?? []
    #expect(inner.count == Self.count)
    #expect(inner.enumerated().allSatisfy { $0.element == .integer(Int64($0.offset)) })
  }

  @Test func twoLargeArraysInARowReuseTheGivenBackStack() throws {
    let strings = (0..<Self.count).map { #""s\#($0)""# }.joined(separator: ",")
    let text = "[[" + strings + "],[" + strings + "],7]"
    let value = try JSON(parsing: Array(text.utf8))
    let arrays = value.arrayValue ?? []
    #expect(arrays.count == 3 && arrays.last == 7)
    for array in arrays.prefix(2) {
      let elements = array.arrayValue ?? []
      #expect(elements.count == Self.count)
      #expect(elements.last == .string("s\(Self.count - 1)"))
      #expect(elements.enumerated().allSatisfy { $0.element == .string("s\($0.offset)") })
    }
  }

  @Test func aParseThatFailsInsideALargeArrayReportsWhere() {
    let numbers = (0..<Self.count).map(String.init).joined(separator: ",")
    let text = Array(("[\"keep\",[" + numbers + ",}]").utf8)
    #expect(throws: JSONParseError.self) { try JSON(parsing: text) }
    do {
      _ = try JSON(parsing: text)
    } catch {
      // The `}` where a value was expected, two bytes before the end (positions count from 1).
      #expect(error.position == text.count - 1)
    }
  }
}

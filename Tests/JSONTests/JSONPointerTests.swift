import Testing

@testable import JSON

@Suite struct JSONPointerTests {
  @Test func parsesTokensAndUnescapesTildeAndSlash() throws {
    #expect(try JSONPointer(parsing: "").tokens == [])
    #expect(try JSONPointer(parsing: "/").tokens == [""])
    #expect(try JSONPointer(parsing: "/a/b").tokens == ["a", "b"])
    #expect(try JSONPointer(parsing: "/a~1b/m~0n").tokens == ["a/b", "m~n"])
    #expect(try JSONPointer(parsing: "//x/").tokens == ["", "x", ""])
    // `~01` is `~` then `1`, never `/`: unescaping happens once, left to right.
    #expect(try JSONPointer(parsing: "/~01").tokens == ["~1"])
    #expect(try JSONPointer(parsing: "/ä/€").tokens == ["ä", "€"])
  }

  @Test(arguments: ["a", "a/b", "/~", "/a~2", "/~a", "#/a"])
  func rejectsMalformedText(_ text: String) {
    #expect(throws: JSONPointerError.self) { try JSONPointer(parsing: text) }
  }

  @Test func malformedTextErrorSaysWhereAndWhy() {
    do {
      _ = try JSONPointer(parsing: "/ab~2")
      Issue.record("expected a JSONPointerError")
    } catch {
      #expect(error.offset == 3)
      #expect(error.reason.contains("\"0\""))
    }
  }

  @Test func descriptionEscapesAndRoundTrips() throws {
    let pointer = JSONPointer(tokens: ["a/b", "m~n", "", "0"])
    #expect(pointer.description == "/a~1b/m~0n//0")
    #expect(try JSONPointer(parsing: pointer.description) == pointer)
    #expect(JSONPointer.root.description == "")
  }

  @Test func appendingAndPrefixes() {
    let items = JSONPointer.root.appending("items")
    let first = items.appending(index: 0)
    #expect(first.description == "/items/0")
    #expect(JSONPointer.root.isPrefix(of: first))
    #expect(items.isPrefix(of: first))
    #expect(first.isPrefix(of: first))
    #expect(!first.isProperPrefix(of: first))
    #expect(!first.isPrefix(of: items))
    // Prefix by tokens, not by text: "/item" is not a prefix of "/items".
    #expect(!JSONPointer(tokens: ["item"]).isPrefix(of: items))
    #expect(first.parent == items)
    #expect(JSONPointer.root.parent == nil)
  }

  @Test func resolvesValues() {
    let document: JSON = ["a": ["b": [10, 20, ["c/d": true]]], "": 1, " ": 2]
    #expect(JSONPointer.root.value(in: document) == document)
    #expect(JSONPointer("/a/b/1").value(in: document) == 20)
    #expect(JSONPointer("/a/b/2/c~1d").value(in: document) == true)
    #expect(JSONPointer("/").value(in: document) == 1)
    #expect(JSONPointer("/ ").value(in: document) == 2)
    #expect(JSONPointer("/a/b/3").value(in: document) == nil)
    #expect(JSONPointer("/a/b/-").value(in: document) == nil)
    #expect(JSONPointer("/a/b/01").value(in: document) == nil)
    #expect(JSONPointer("/a/b/1/x").value(in: document) == nil)
    #expect(JSONPointer("/zz").value(in: document) == nil)
  }

  @Test func arrayIndicesAreDigitsWithoutLeadingZeros() {
    #expect(JSONPointer.arrayIndex("0") == 0)
    #expect(JSONPointer.arrayIndex("17") == 17)
    #expect(JSONPointer.arrayIndex("01") == nil)
    #expect(JSONPointer.arrayIndex("-1") == nil)
    #expect(JSONPointer.arrayIndex("1e0") == nil)
    #expect(JSONPointer.arrayIndex("+1") == nil)
    #expect(JSONPointer.arrayIndex("") == nil)
    #expect(JSONPointer.arrayIndex("-") == nil)
    #expect(JSONPointer.arrayIndex("99999999999999999999999") == nil)
  }
}

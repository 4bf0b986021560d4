import JSON
import Testing

@Suite("Writing: serialized() and write(to:)")
struct WritingTests {
  func text(_ value: JSON) throws -> String {
    String(decoding: try value.serialized(), as: UTF8.self)
  }

  @Test func compactWithKeysInInsertionOrder() throws {
    let value: JSON = ["jsonrpc": "2.0", "id": 1, "result": ["b": [true, false, nil], "a": [:]]]
    #expect(try text(value) == #"{"jsonrpc":"2.0","id":1,"result":{"b":[true,false,null],"a":{}}}"#)
  }

  @Test(
    "doubles in the shortest form that reads back",
    arguments: [
      (19.99, "19.99"), (0.1, "0.1"), (1.0, "1.0"), (-0.0, "-0.0"), (1e-5, "1e-05"),
      (1e16, "1e+16"),
      (.leastNonzeroMagnitude, "5e-324"), (1.7976931348623157e308, "1.7976931348623157e+308"),
      (-2.5, "-2.5"),
    ] as [(Double, String)])
  func shortestDoubles(_ double: Double, _ expected: String) throws {
    #expect(try text(.double(double)) == expected)
    #expect(try JSON(parsing: expected) == .double(double))
  }

  @Test func integersAreExact() throws {
    #expect(
      try text([.integer(.max), .integer(.min), 0, -7, 10])
        == "[9223372036854775807,-9223372036854775808,0,-7,10]")
  }

  @Test func nonASCIIIsWrittenAsUTF8AndOnlyRequiredEscapesAreUsed() throws {
    let value: JSON = .string("Zoë 😀 \u{2028} \u{7F} / \" \\ \n\r\t\u{8}\u{C}\u{0}\u{1F}")
    #expect(
      try text(value) == "\"Zoë 😀 \u{2028} \u{7F} / \\\" \\\\ \\n\\r\\t\\b\\f\\u0000\\u001f\"")
  }

  @Test(
    "non-finite doubles are refused with the pointer of the value",
    arguments: [Double.nan, .infinity, -.infinity])
  func nonFiniteDoublesAreRefused(_ double: Double) throws {
    let value: JSON = ["items": [1, ["price/€": .double(double)]]]
    #expect(throws: JSONWriteError.self) { try value.serialized() }
    do {
      _ = try value.serialized()
    } catch {
      #expect(error.kind == .nonFiniteDouble)
      #expect(error.pointer == "/items/1/price~1€")
    }
  }

  @Test func writeAppendsToTheBufferAndLeavesItUntouchedOnFailure() throws {
    var buffer = Array("x\n".utf8)
    try (["a": 1] as JSON).write(to: &buffer)
    #expect(buffer == Array("x\n{\"a\":1}".utf8))
    #expect(throws: JSONWriteError.self) {
      try (["a", [.double(.nan)]] as JSON).write(to: &buffer)
    }
    #expect(buffer == Array("x\n{\"a\":1}".utf8))
  }

  /// The server's writer thread writes its lines into one `JSONWriter`: raw text around
  /// values, and a value that cannot be written leaves nothing behind.
  @Test func aWriterTakesRawTextAndValuesAndDropsAFailedValue() throws {
    var writer = JSONWriter(capacity: 1)
    writer.append(#"{"id":"#)
    try writer.write(["a": [1, "x\n"]])
    writer.append(#","n":["#)
    writer.write(unsigned: 0)
    writer.append(UInt8(ascii: ","))
    writer.write(unsigned: UInt64.max)
    writer.append(UInt8(ascii: ","))
    writer.write(string: "q\"")
    let before = writer.count
    do {
      try writer.write([1, .double(.nan)])
      Issue.record("a NaN was written")
    } catch {
      #expect(error.kind == .nonFiniteDouble)
    }
    #expect(writer.count == before)
    writer.append("]}")
    let text = writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    #expect(text == #"{"id":{"a":[1,"x\n"]},"n":[0,18446744073709551615,"q\""]}"#)
    writer.truncate(to: 0)
    #expect(writer.count == 0)
  }

  /// `write(array:)` (a patch's operations, read in place) writes what writing `.array` of the
  /// same elements writes, and nothing of a failed array.
  @Test func anArrayOfElementsIsWrittenAsTheArrayValue() throws {
    let keys = (0..<12).map { "k\($0)\"/~\u{1}é" }  // past the linear limit: an indexed object
    let wide = JSON.object(JSONObject(keys.map { ($0, JSON.string($0 + "\n")) }))
    let elements: [JSON] = [
      ["op": "replace", "path": "/count", "value": 7], wide, [], [:], .null, [[1, "x"]],
    ]
    var writer = JSONWriter(capacity: 1)
    try writer.write(array: elements)
    let text = writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    #expect(text == String(decoding: try JSON.array(elements).serialized(), as: UTF8.self))
    #expect(try JSON(parsing: Array(text.utf8)) == .array(elements))
    try writer.write(array: [])
    let before = writer.count
    do {
      try writer.write(array: [1, ["a/b": [.double(.nan)]]])
      Issue.record("a NaN was written")
    } catch {
      #expect(error.pointer == "/1/a~1b/0")
    }
    #expect(writer.count == before)
    #expect(writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } == text + "[]")
  }

  /// An optional member: its prefix and value when present, nothing when absent or failed.
  @Test func anOptionalMemberIsWrittenOnlyWhenPresentAndWhole() throws {
    var writer = JSONWriter()
    writer.append("{\"a\":1")
    try writer.write(#","cause":"#, ifPresent: nil)
    try writer.write(#","cause":"#, ifPresent: ["id": "x"])
    do {
      try writer.write(#","bad":"#, ifPresent: [.double(.infinity)])
      Issue.record("an infinity was written")
    } catch {
      #expect(error.pointer == "/0")
    }
    writer.append(UInt8(ascii: "}"))
    let text = writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    #expect(text == #"{"a":1,"cause":{"id":"x"}}"#)
  }

  /// Decimals are written two digits at a time: every length, odd and even, and the edges.
  @Test func unsignedDecimalsOfEveryLength() {
    var values: [UInt64] = [0, 9, 10, 99, 100, 101, 999, 1000, UInt64.max, UInt64.max - 1]
    var power: UInt64 = 1
    for _ in 0..<19 {
      values += [power, power &* 7 &+ 3, power * 10 - 1]
      power *= 10
    }
    for value in values {
      var writer = JSONWriter(capacity: 1)
      writer.write(unsigned: value)
      let text = writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
      #expect(text == String(value))
    }
  }

  /// An integer id or cause is written without the walk of a value; anything else is left to
  /// `write(_:)`, and nothing of it is written.
  @Test func integersAreWrittenDirectlyAndOtherValuesAreLeftAlone() throws {
    var writer = JSONWriter(capacity: 1)
    for value: JSON in [.integer(.min), -1, 0, 42, .integer(.max)] {
      let written = writer.writeIfInteger(value)
      #expect(written)
      writer.append(UInt8(ascii: ","))
    }
    for value: JSON in ["7", 7.5, .null, [7], ["id": 7]] {
      let written = writer.writeIfInteger(value)
      #expect(!written)
    }
    writer.write(integer: -12)
    let text = writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    #expect(text == "-9223372036854775808,-1,0,42,9223372036854775807,-12")
  }

  /// Strings are checked and copied several bytes at a time: every length up to past three
  /// words, with each byte that needs an escape (and a multi-byte character, whose bytes must
  /// not look like one) at every position, against an escaper that goes scalar by scalar.
  @Test func stringsOfEveryLengthWithAnEscapeAtEveryPosition() throws {
    func reference(_ string: String) -> String {
      var text = "\""
      for scalar in string.unicodeScalars {
        switch scalar {
        case "\"": text += "\\\""
        case "\\": text += "\\\\"
        case "\n": text += "\\n"
        case "\r": text += "\\r"
        case "\t": text += "\\t"
        case "\u{8}": text += "\\b"
        case "\u{C}": text += "\\f"
        case ..<" ":
          text += "\\u00" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
        default: text.unicodeScalars.append(scalar)
        }
      }
      return text + "\""
    }
    // Printable ASCII without `"` and `\`.
    let plain = Array("abcdefghijklmnopqrstuvwxyz0123456789 !#$%&'()*+,-./:;<=>?@[]^_`{|}~")
    for length in 0...27 {
      let base = Array(plain[0..<length])
      var cases = [String(base)]
      for position in 0..<length {
        for special in [
          "\"", "\\", "\n", "\r", "\t", "\u{8}", "\u{C}", "\u{0}", "\u{1F}", "\u{7F}", "é", "😀",
        ] {
          var characters = base
          characters[position] = Character(special)
          cases.append(String(characters))
        }
      }
      for string in cases {
        var writer = JSONWriter(capacity: 1)
        writer.write(string: string)
        let text = writer.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        #expect(text == reference(string), "\(Array(string.utf8))")
        #expect(try JSON(parsing: Array(text.utf8)) == .string(string))
      }
    }
  }

  /// The output budget weighs a line by this estimate before it is written: never less than the
  /// text for values without escapes, and not far above it.
  @Test func theEstimatedSizeCoversTheText() throws {
    let values: [JSON] = [
      ["name": "Zoë", "tags": ["a", "b"], "n": 12, "ok": true, "none": .null],
      [], [:], "", 1.5, ["op": "replace", "path": "/count", "value": 7],
    ]
    for value in values {
      let written = try value.serialized().count
      #expect(value.estimatedEncodedSize >= written, "\(value)")
      #expect(value.estimatedEncodedSize <= written + 64, "\(value)")
    }
  }

  @Test func descriptionIsTheCompactText() {
    #expect((["a": [1, 2.5, "x"]] as JSON).description == #"{"a":[1,2.5,"x"]}"#)
    #expect(JSON.array([.double(.infinity)]).description == "[inf]")
  }

  @Test func nestingPastTheLimitIsRefused() throws {
    var value: JSON = []
    for _ in 1..<JSON.maximumDepth { value = [value] }
    let written = try value.serialized()
    #expect(written.count == 2 * JSON.maximumDepth)
    #expect(try JSON(parsing: written) == value)
    let tooDeep: JSON = ["a": [value]]
    do {
      _ = try tooDeep.serialized()
      Issue.record("wrote \(JSON.maximumDepth + 2) levels")
    } catch {
      #expect(error.kind == .tooDeep)
      #expect(error.pointer.hasPrefix("/a/0/0/0"))
    }
  }
}

/// Writing a large value in pieces handed on as they are written, and the check that makes
/// that safe (nothing handed on can be taken back).
@Suite struct WritingInPiecesTests {
  let large: JSON = .array(
    (0..<20_000).map { ["id": .integer(Int64($0)), "text": .string("note \($0)")] })

  @Test func piecesHandedOnAddUpToTheWholeTextWithASmallBuffer() throws {
    var writer = JSONWriter(capacity: 4096)
    var pieces: [UInt8] = []
    var handedOn = 0
    writer.append("[")
    try writer.write(handingOnAt: 4096) { bytes in
      pieces += bytes
      handedOn += 1
    } _: { (writer) throws(JSONWriteError) in
      try writer.write(large)
    }
    writer.append("]")
    pieces += writer.withUnsafeBytes { Array($0) }
    #expect(pieces == Array("[".utf8) + (try large.serialized()) + Array("]".utf8))
    #expect(handedOn > 50)
    #expect(writer.capacity <= 8192)
  }

  @Test func withoutAHandOnTheBufferGrowsAsBefore() throws {
    var writer = JSONWriter(capacity: 4096)
    try writer.write(large)
    #expect(writer.capacity >= writer.count)
    #expect(writer.count > 100_000)
  }

  /// The check throws exactly when writing throws, with the same pointer.
  @Test func theCheckAgreesWithTheWriter() {
    func nested(_ depth: Int, _ leaf: JSON) -> JSON {
      var value = leaf
      for level in 0..<depth { value = level.isMultiple(of: 2) ? [value] : ["k": value] }
      return value
    }
    let values: [JSON] = [
      large, ["a": [1, ["b": .double(.nan)]]], [.double(.infinity)],
      nested(JSON.maximumDepth - 2, 1), nested(JSON.maximumDepth - 1, 1),
      nested(JSON.maximumDepth - 1, []), nested(JSON.maximumDepth, 1),
    ]
    for value in values {
      var writer = JSONWriter()
      let written: JSONWriteError?
      do {
        try writer.write(value)
        written = nil
      } catch {
        written = error
      }
      let checked: JSONWriteError?
      do {
        try value.checkWritable()
        checked = nil
      } catch {
        checked = error
      }
      #expect(written?.pointer == checked?.pointer)
      #expect(written?.kind == checked?.kind)
    }
  }
}

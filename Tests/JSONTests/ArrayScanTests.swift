import Testing

@testable import JSON

/// The bracket scan reads 64 bytes at a time and finds strings from masks that carry from one
/// block to the next (a string still open, a backslash run that escapes the next block's first
/// byte): each of its levels must answer exactly as the byte-at-a-time reference does, wherever
/// a quote, a backslash run or a bracket falls against the blocks, on JSON and on text that is
/// not JSON.
@Suite("Parsing: the bracket scan of a large array")
struct ArrayScanTests {
  /// The scan's answer compared as a whole (its split is a tuple).
  struct Answer: Equatable, CustomStringConvertible {
    var close: Int
    var count: Int
    var splitOffset: Int?
    var splitIndex: Int?

    init(_ scan: JSONArrayScan) {
      (close, count, splitOffset, splitIndex) =
        (scan.close, scan.count, scan.split?.offset, scan.split?.index)
    }

    init(_ scan: ReferenceArrayScan) {
      (close, count, splitOffset, splitIndex) =
        (scan.close, scan.count, scan.split?.offset, scan.split?.index)
    }

    var description: String {
      "close \(close) count \(count) split \(String(describing: splitOffset))"
        + " #\(String(describing: splitIndex))"
    }
  }

  /// What went differently from the reference, and how many texts closed (so that a generator
  /// that stopped making closed arrays is noticed).
  struct Comparison {
    var differences: [String] = []
    var closed = 0
    var compared = 0

    /// Compares every level (and the default) with the reference on `text`.
    mutating func compare(_ text: [UInt8], open: Int = 0, step: Int) {
      text.withUnsafeBytes { raw in
        let expected = ReferenceArrayScan.scan(raw, arrayAt: open, step: step).map(Answer.init)
        compared += 1
        if expected != nil { closed += 1 }
        for level in 0...JSONArrayScan.bestLevel {
          let actual = JSONArrayScan.scan(raw, arrayAt: open, step: step, level: level)
            .map(Answer.init)
          guard actual != expected, differences.count < 3 else { continue }
          differences.append(
            "level \(level), open \(open), step \(step): \(String(describing: actual)) where the"
              + " reference gave \(String(describing: expected)) for \(text.count) bytes: "
              + String(decoding: text.prefix(300), as: UTF8.self).debugDescription)
        }
      }
    }
  }

  @Test func theProcessorRunsAVectorLevel() {
    // This machine is x86-64: were the vector levels missing, every comparison below would
    // compare the byte level with itself.
    #if arch(x86_64)
      #expect(JSONArrayScan.bestLevel >= 2)
    #else
      #expect(JSONArrayScan.bestLevel >= 1)
    #endif
  }

  @Test func randomArraysAtEveryAlignmentAndStep() {
    var random = SeededRandom(seed: 45)
    var comparison = Comparison()
    for round in 0..<600 {
      var generator = ArrayTextGenerator(random: random)
      let array = generator.array(depth: 0)
      random = generator.random
      // Bytes before the `[` move every block boundary (the blocks start after it).
      let lead = [UInt8](repeating: UInt8(ascii: " "), count: round % 67)
      let text = lead + array + Array(" ,\"x\\\"]".utf8)
      let step = 1 + Int.random(in: 0..<(round % 3 == 0 ? 8 : 300), using: &random)
      comparison.compare(text, open: lead.count, step: step)
    }
    #expect(comparison.differences.isEmpty, "\(comparison.differences)")
    #expect(comparison.closed == comparison.compared)
  }

  @Test func everyStepOfAFewArrays() {
    var random = SeededRandom(seed: 7)
    var comparison = Comparison()
    for _ in 0..<6 {
      var generator = ArrayTextGenerator(random: random)
      let text = generator.array(depth: 0, elements: 12)
      random = generator.random
      for step in 0...(text.count + 1) { comparison.compare(text, step: step) }
    }
    #expect(comparison.differences.isEmpty, "\(comparison.differences)")
    #expect(comparison.closed == comparison.compared)
  }

  @Test func everyTruncationAndAWrongCloser() {
    var random = SeededRandom(seed: 11)
    var comparison = Comparison()
    for _ in 0..<4 {
      var generator = ArrayTextGenerator(random: random)
      let text = generator.array(depth: 0, elements: 10)
      random = generator.random
      for end in 0...text.count {
        comparison.compare(Array(text[..<end]), step: 1 + end % 97)
      }
      // Closed by `}` at depth 0: refused, however much follows.
      var wrong = text
      wrong[wrong.count - 1] = UInt8(ascii: "}")
      comparison.compare(wrong, step: 64)
      comparison.compare(wrong + Array("]]]".utf8), step: 5)
    }
    #expect(comparison.differences.isEmpty, "\(comparison.differences)")
    // Only each whole array: a truncated one never closes, a `}` at depth 0 is refused.
    #expect(comparison.closed == 4)
  }

  /// A string holding a run of 0 to 9 backslashes, then a quote (escaped after an odd run) and
  /// a bracket, a comma or a closing quote, placed so that the run ends at every place around
  /// a block boundary and carries into the next block; with and without a backslash outside
  /// the string soon after (the bytes then scan on from the block's start, the carry with them).
  @Test func backslashRunsAcrossBlocks() {
    var comparison = Comparison()
    for filler in 0..<140 {
      for run in 0...9 {
        for after in ["\"", "]", ",", "}", "\\", "x"] {
          for stray in ["", "\\"] {
            var text = Array("[\"".utf8)
            text += [UInt8](repeating: UInt8(ascii: "a"), count: filler)
            text += [UInt8](repeating: UInt8(ascii: "\\"), count: run)
            text += Array("\"\(after)\"\(stray),1,[2],{\"k\":\"]\"}]".utf8)
            comparison.compare(text, step: 1 + filler % 5)
            comparison.compare(text, step: 64)
          }
        }
      }
    }
    #expect(comparison.differences.isEmpty, "\(comparison.differences)")
    #expect(comparison.closed > 1000)
  }

  /// A quote, and a backslash outside a string (not JSON: the byte scan reads it as nothing),
  /// at every offset of the first blocks.
  @Test func quotesAndStrayBackslashesAtEveryOffset() {
    var comparison = Comparison()
    let body = Array("1, {\"a\": [true, \"x,]}\"]}, \"q\", 2".utf8)
    for place in 0..<200 {
      for special in ["\"", "\\", "\\\"", "\\\\\"", "\",\""] {
        var text = Array("[".utf8) + body + Array(",".utf8)
        text += [UInt8](repeating: UInt8(ascii: " "), count: place)
        text += Array(special.utf8) + body + Array("]".utf8)
        comparison.compare(text, step: 3)
        comparison.compare(text, step: 1000)
      }
    }
    #expect(comparison.differences.isEmpty, "\(comparison.differences)")
    #expect(comparison.closed > 200)
  }

  /// Random bytes drawn from the ones the scan looks at: strings that never close, brackets
  /// that close early or by `}`, backslashes anywhere.
  @Test func randomStructuralBytes() {
    var random = SeededRandom(seed: 3)
    var comparison = Comparison()
    let alphabet = Array("[[[{{]]}},,,\"\"\\\\\\ \n\tax".utf8)
    for _ in 0..<3000 {
      let count = Int.random(in: 1...400, using: &random)
      var text = [UInt8(ascii: "[")]
      for _ in 1..<count {
        let byte = alphabet.randomElement(using: &random) ?? UInt8(ascii: "x")
        text.append(byte)
      }
      comparison.compare(text, step: Int.random(in: 1...90, using: &random))
    }
    #expect(comparison.differences.isEmpty, "\(comparison.differences)")
    #expect(comparison.closed > 100)
  }

  @Test func emptyAndShortArrays() {
    var comparison = Comparison()
    for text in ["[]", "[ \n\t]", "[1]", "[ 1 ]", "[,]", "[", "", "[}", "[[]", "[\"]\"]", "x[1,2]"]
    {
      for open in 0..<2 { comparison.compare(Array(text.utf8), open: open, step: 1) }
    }
    #expect(comparison.differences.isEmpty, "\(comparison.differences)")
    // Six at the `[`; from the byte after it, all but the three too short to close and
    // the `}`.
    #expect(comparison.closed == 13)
  }

  /// A long array of the notes an open carries, so that many blocks pass without a mark
  /// between the marks (the path that counts a block's commas at once).
  @Test func aLongArrayOfNotes() {
    var comparison = Comparison()
    var text = Array("{\"notes\":[".utf8)
    for index in 0..<3000 {
      if index > 0 { text += Array((index % 7 == 0 ? ",\n  " : ",").utf8) }
      text += Array(
        "{\"id\":\"n\(index)\",\"text\":\"note \\\"\(index)\\\\\",\"tags\":[\(index % 3),[]],"
          .utf8)
      text += Array("\"done\":\(index % 2 == 0)}".utf8)
    }
    text += Array("]}".utf8)
    for step in [1, 63, 64, 65, 1000, 4096, 65536] { comparison.compare(text, open: 9, step: step) }
    #expect(comparison.differences.isEmpty, "\(comparison.differences)")
    #expect(comparison.closed == 7)
  }
}

/// Random JSON arrays as text: nested objects and arrays, strings with escapes and backslash
/// runs and the bytes the scan looks for (`]`, `}`, `,`, `"`), white space of every kind.
struct ArrayTextGenerator {
  var random: SeededRandom

  mutating func array(depth: Int, elements: Int? = nil) -> [UInt8] {
    let count = elements ?? Int.random(in: 0...(depth == 0 ? 14 : 4), using: &random)
    var text = Array("[".utf8) + space()
    for index in 0..<count {
      if index > 0 { text += Array(",".utf8) + space() }
      text += value(depth: depth + 1) + space()
    }
    return text + Array("]".utf8)
  }

  mutating func value(depth: Int) -> [UInt8] {
    switch Int.random(in: 0..<(depth < 4 ? 8 : 5), using: &random) {
    case 0: return Array("null".utf8)
    case 1: return Array(String(Int.random(in: -99999...99999, using: &random)).utf8)
    case 2, 3, 4: return string()
    case 5: return array(depth: depth)
    default:
      let count = Int.random(in: 0...4, using: &random)
      var text = Array("{".utf8) + space()
      for index in 0..<count {
        if index > 0 { text += Array(",".utf8) + space() }
        text += string() + space() + Array(":".utf8) + space() + value(depth: depth + 1)
      }
      return text + space() + Array("}".utf8)
    }
  }

  mutating func string() -> [UInt8] {
    var text = Array("\"".utf8)
    for _ in 0..<Int.random(in: 0...12, using: &random) {
      switch Int.random(in: 0..<10, using: &random) {
      case 0: text += Array("\\\"".utf8)
      case 1:
        // An even run (backslashes), then maybe an escaped quote: runs of every length.
        let pairs = Int.random(in: 1...5, using: &random)
        text += [UInt8](repeating: UInt8(ascii: "\\"), count: 2 * pairs)
        if Bool.random(using: &random) { text += Array("\\\"".utf8) }
      case 2: text += Array("\\u00e9\\n".utf8)
      case 3:
        let bytes = ["]", "}", ",", "[", "{", "] ,", "\\]"].randomElement(using: &random)
        text += Array((bytes ?? "]").utf8)
      case 4:
        text += [UInt8](
          repeating: UInt8(ascii: "a"), count: Int.random(in: 20...70, using: &random))
      case 5: text += Array("é✓".utf8)
      default: text += Array("abc ".utf8)
      }
    }
    return text + Array("\"".utf8)
  }

  mutating func space() -> [UInt8] {
    let kinds: [UInt8] = [0x20, 0x0A, 0x0D, 0x09]
    return (0..<Int.random(in: 0...2, using: &random)).map { _ in
      kinds[Int.random(in: 0..<4, using: &random)]
    }
  }
}

import JSON
import Testing

/// SplitMix64: a tiny seeded generator, so a failing value can be reproduced from its seed.
struct SeededGenerator: RandomNumberGenerator {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

/// Random `JSON` values that stress the codec: every escape, NUL, non-ASCII from every UTF-8
/// length, integer extremes, doubles from raw bit patterns.
struct JSONValueGenerator {
  var random: SeededGenerator

  static let scalars: [Unicode.Scalar] = [
    "a", "Z", "0", " ", "\"", "\\", "/", "\n", "\r", "\t", "\u{8}", "\u{C}", "\u{0}", "\u{1}",
    "\u{1F}", "\u{7F}", "é", "ß", "\u{2028}", "\u{2029}", "€", "中", "\u{FFFD}", "\u{FEFF}",
    "\u{FFFF}", "😀", "\u{10FFFF}", "\u{E9}", "~",
  ]

  mutating func string(allowNul: Bool) -> String {
    var result = String.UnicodeScalarView()
    for _ in 0..<Int.random(in: 0...12, using: &random) {
      let scalar = Self.scalars.randomElement(using: &random) ?? "a"
      if scalar == "\u{0}" && !allowNul { continue }
      result.append(scalar)
    }
    return String(result)
  }

  mutating func double() -> Double {
    switch Int.random(in: 0..<4, using: &random) {
    case 0:
      return [19.99, 0.1, -0.0, 1e16, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 2.5]
        .randomElement(using: &random) ?? 0
    case 1: return Double.random(in: -1e6...1e6, using: &random)
    default:
      let bits = Double(bitPattern: random.next())
      return bits.isFinite ? bits : 1.5
    }
  }

  mutating func integer() -> Int64 {
    switch Int.random(in: 0..<3, using: &random) {
    case 0:
      return [Int64.min, .max, 0, -1, 1, Int64(Int32.max) + 1].randomElement(using: &random) ?? 0
    case 1: return Int64.random(in: -1000...1000, using: &random)
    default: return Int64(bitPattern: random.next())
    }
  }

  mutating func value(depth: Int) -> JSON {
    let kind = Int.random(in: 0..<(depth > 4 ? 5 : 7), using: &random)
    switch kind {
    case 0: return .null
    case 1: return .bool(Bool.random(using: &random))
    case 2: return .integer(integer())
    case 3: return .double(double())
    case 4: return .string(string(allowNul: true))
    case 5:
      return .array(
        (0..<Int.random(in: 0...5, using: &random)).map { _ in value(depth: depth + 1) })
    default:
      var object = JSONObject()
      // jansson cannot hold NUL in keys (see JSONTestSuiteTests), so generated keys have none.
      for _ in 0..<Int.random(in: 0...12, using: &random) {
        object[string(allowNul: false)] = value(depth: depth + 1)
      }
      return .object(object)
    }
  }
}

@Suite("Round trips: parse(serialize(x)) == x")
struct RoundTripTests {
  @Test("generated values round-trip", arguments: 0..<5)
  func generatedValues(seed: UInt64) throws {
    var generator = JSONValueGenerator(random: SeededGenerator(state: seed))
    for index in 0..<1_000 {
      let value = generator.value(depth: 0)
      let bytes = try value.serialized()
      let parsed = try JSON(parsing: bytes)
      #expect(parsed == value, "seed \(seed), value \(index): \(value)")
      if let object = parsed.objectValue, let original = value.objectValue {
        #expect(object.keys == original.keys, "key order, seed \(seed), value \(index)")
      }
      #expect(try parsed.serialized() == bytes, "writing is deterministic, seed \(seed)")
    }
  }

  @Test func nestingAtTheLimitRoundTripsAndOneMoreIsACleanError() throws {
    // The leaf object and its string are two levels; scalars count (see `JSON.maximumDepth`).
    var value: JSON = ["leaf": "\u{0}é"]
    for level in 1...(JSON.maximumDepth - 2) {
      value = level.isMultiple(of: 2) ? [value] : ["k": value]
    }
    #expect(try JSON(parsing: value.serialized()) == value)
    let tooDeep: JSON = [value]
    #expect(throws: JSONWriteError.self) { try tooDeep.serialized() }
    let text = "[" + String(decoding: try value.serialized(), as: UTF8.self) + "]"
    #expect(throws: JSONParseError.self) { try JSON(parsing: text) }
    do {
      _ = try JSON(parsing: text)
    } catch {
      #expect(error.kind == .tooDeep)
    }
  }

  @Test func aNulInAKeyIsWrittenAndReadBack() throws {
    let value: JSON = ["a\u{0}b": 1, "nested": [["x\u{0}": "\u{0}"]]]
    let bytes = try value.serialized()
    #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"a\u0000b":1,"#))
    #expect(try JSON(parsing: bytes) == value)
  }
}

@Suite("Parsing damaged text never crashes")
struct DamagedTextTests {
  @Test("random byte edits of valid JSON parse or fail with a located error", arguments: 0..<3)
  func randomEdits(seed: UInt64) throws {
    var generator = JSONValueGenerator(random: SeededGenerator(state: 1000 + seed))
    let interesting: [UInt8] = [
      0x00, 0x22, 0x5C, 0x5B, 0x5D, 0x7B, 0x7D, 0x2C, 0x3A, 0xFF, 0xC3, 0xED,
    ]
    for index in 0..<500 {
      var bytes = try generator.value(depth: 0).serialized()
      for _ in 0..<Int.random(in: 1...3, using: &generator.random) {
        let position = Int.random(in: 0...bytes.count, using: &generator.random)
        let byte =
          Bool.random(using: &generator.random)
          ? interesting.randomElement(using: &generator.random) ?? 0
          : UInt8.random(in: 0...255, using: &generator.random)
        switch Int.random(in: 0..<3, using: &generator.random) {
        case 0: bytes.insert(byte, at: position)
        case 1 where position < bytes.count: bytes.remove(at: position)
        default: if position < bytes.count { bytes[position] = byte }
        }
      }
      let value: JSON
      do {
        value = try JSON(parsing: bytes)
      } catch {
        #expect(!error.reason.isEmpty)
        #expect(error.line >= 1)
        #expect((0...bytes.count).contains(error.position), "\(error), seed \(seed), text \(index)")
        continue
      }
      #expect(!bytes.contains(0), "a raw NUL was accepted, seed \(seed), text \(index)")
      #expect(try JSON(parsing: value.serialized()) == value)
    }
  }
}

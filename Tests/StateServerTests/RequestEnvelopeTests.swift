import JSON
import Testing

@testable import StateServer

/// ``RequestEnvelope``: a request it reads must be exactly the whole parse's message (its
/// params' members in the same order); every line it does not read goes to the whole parse,
/// which reports the errors and whose envelope the connection checks.
@Suite struct RequestEnvelopeTests {
  /// The envelope's reading of `line`, or nil.
  static func read(_ line: String) -> RequestEnvelope? {
    Array(line.utf8).withUnsafeBytes { RequestEnvelope(reading: $0) }
  }

  /// Whether the envelope left `line` alone or read exactly what the whole parse gives: an
  /// object of `jsonrpc` "2.0", `method`, and the same `id` and `params` or neither.
  static func agrees(_ line: [UInt8]) -> Bool {
    guard let read = line.withUnsafeBytes({ RequestEnvelope(reading: $0) }) else { return true }
    guard let whole = try? JSON(parsing: line), let object = whole.objectValue else {
      return false
    }
    let known: Set<String> = ["jsonrpc", "id", "method", "params"]
    return Set(object.keys).isSubset(of: known) && object["jsonrpc"] == "2.0"
      && object["method"] == .string(read.method) && object["id"] == read.id
      && identical(object["params"], read.params) && whole == read.message
  }

  /// The same value with members in the same order (`==` ignores the order of keys).
  static func identical(_ a: JSON?, _ b: JSON?) -> Bool {
    a == b && (try? a?.serialized()) == (try? b?.serialized())
  }

  static let plainRequests = [
    #"{"jsonrpc":"2.0","id":1,"method":"dispatch","params":{"store":"counter","action":{"type":"increment"}}}"#,
    // Python's json.dumps without separators, Lua's tables in any order, a shell's printf.
    #"{"jsonrpc": "2.0", "id": 7, "method": "dispatch", "params": {"store": "cart"}}"#,
    #"{"params":[1,2,{"a":null}],"method":"m","id":"req-1","jsonrpc":"2.0"}"#,
    "  { \"id\" : null , \"jsonrpc\" : \"2.0\" , \"method\" : \"state/get\" }\t\r",
    #"{"jsonrpc":"2.0","method":"dispatch","params":{"store":"counter","action":{"type":"increment"}}}"#,
    #"{"jsonrpc":"2.0","id":-0,"method":"initialize","params":{}}"#,
    #"{"jsonrpc":"2.0","id":123456789012345678,"method":"x","params":[]}"#,
    #"{"jsonrpc":"2.0","id":-42,"method":"x","params":{"text":"caf\u00e9 \"quoted\" 😀"}}"#,
    // Params: plain strings and structures read member by member, anything else by jansson.
    #"{"jsonrpc":"2.0","id":3,"method":"dispatch","params":{"store":"notes","action":{"type":"edit","id":"n1","text":"x"},"wait":"settled"}}"#,
    #"{"jsonrpc":"2.0","id":4,"method":"m","params":{"a":"x","b":"y","c":[1,2.5,true],"d":{}}}"#,
    #"{"jsonrpc":"2.0","id":5,"method":"m","params":{"s":"t","n":1,"b":false,"z":null}}"#,
    #"{"jsonrpc":"2.0","id":6,"method":"m","params":{ }}"#,
    #"{"jsonrpc":"2.0","id":7,"method":"m","params":{"a":"1","b":"2","c":"3","d":"4","e":"5","f":"6","g":"7","h":"8","i":"9"}}"#,
    #"{"jsonrpc":"2.0","id":8,"method":"m","params":{"k\u0065y":"v","café":"\n"}}"#,
  ]

  @Test("plain requests are read here, as the whole parse reads them")
  func readsPlainRequests() throws {
    for line in Self.plainRequests {
      _ = try #require(Self.read(line), "\(line)")
      #expect(Self.agrees(Array(line.utf8)), "\(line)")
    }
    let reordered = try #require(Self.read(Self.plainRequests[2]))
    #expect(reordered.id == .string("req-1"))
    #expect(reordered.method == "m")
    #expect(Self.read(Self.plainRequests[3])?.id == .null)
    #expect(Self.read(Self.plainRequests[4]).map { $0.id == nil } == true)
    #expect(Self.read(Self.plainRequests[6])?.id == .integer(123_456_789_012_345_678))
    #expect(Self.read(Self.plainRequests[7])?.id == .integer(-42))
    let dispatch = try #require(Self.read(Self.plainRequests[8]))
    #expect(dispatch.params?.objectValue?.keys == ["store", "action", "wait"])
    #expect(dispatch.params?["action"]?["text"] == .string("x"))
  }

  static let leftToTheWholeParse = [
    // Not JSON-RPC 2.0, or no method: the connection's checks answer these.
    #"{"jsonrpc":"1.0","id":"","method":"","params":{"n":1.5e3}}"#,
    #"{"id":1,"method":"m"}"#, #"{"jsonrpc":"2.0","id":1}"#, #"{"jsonrpc":"2.0 ","method":"m"}"#,
    // Escapes or bytes beyond ASCII in the framing's strings.
    #"{"jsonrpc":"2.0","id":1,"method":"dis\u0070atch","params":{}}"#,
    #"{"jsonrpc":"2.0","id":1,"method":"café","params":{}}"#,
    #"{"json\u0072pc":"2.0","id":1,"method":"m"}"#,
    #"{"jsonrpc":"2.0","id":"a\"b","method":"m"}"#,
    // Ids that are reals, not quite numbers, or too long to take unchecked.
    #"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#, #"{"jsonrpc":"2.0","id":1e3,"method":"m"}"#,
    #"{"jsonrpc":"2.0","id":01,"method":"m"}"#, #"{"jsonrpc":"2.0","id":-,"method":"m"}"#,
    #"{"jsonrpc":"2.0","id":1234567890123456789,"method":"m"}"#,
    #"{"jsonrpc":"2.0","id":true,"method":"m"}"#, #"{"jsonrpc":"2.0","id":nul,"method":"m"}"#,
    #"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
    // Members repeated, unknown or missing their value; params that are not a structure.
    #"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
    #"{"jsonrpc":"2.0","id":1,"method":"m","params":{},"params":[]}"#,
    #"{"jsonrpc":"2.0","id":1,"method":"m","extra":1}"#, #"{"jsonrpc":"2.0","id":,"method":"m"}"#,
    #"{"jsonrpc":"2.0","id":1,"method":"m","params":5}"#,
    #"{"jsonrpc":"2.0","id":1,"method":"m","params":"p"}"#,
    // What jansson refuses in the params, and text that is not one object.
    #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":2}}"#,
    #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"x","a":"y"}}"#,
    #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{},"b":"","a":[]}}"#,
    #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"b":1,"b":2}}}"#,
    #"{"jsonrpc":"2.0","id":1,"method":"m","params":[99999999999999999999]}"#,
    #"{"jsonrpc":"2.0","id":1,"method":"m","params":[1"#,
    #"{"jsonrpc":"2.0","id":1,"method":"m"} x"#, #"{"jsonrpc":"2.0","id":1,"method":"m",}"#,
    #"{"jsonrpc":"2.0","id":1,"method":"m""#, "{}", "[]", "", " ", "\u{FEFF}{\"id\":1}",
    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":[1\u{0}]}",
    "{\"jsonrpc\":\"2.0\",\"id\":1\u{0},\"method\":\"m\"}",
  ]

  @Test("anything else is left to the whole parse")
  func leavesTheRest() {
    for line in Self.leftToTheWholeParse {
      #expect(Self.read(line) == nil, "\(line.debugDescription)")
    }
  }

  @Test("params that could nest past the limit are left to the whole parse, which refuses them")
  func leavesDeepParams() {
    let deep = String(repeating: "[", count: 2048) + String(repeating: "]", count: 2048)
    let line = #"{"jsonrpc":"2.0","id":1,"method":"m","params":"# + deep + "}"
    #expect(Self.read(line) == nil)
    #expect(throws: JSONParseError.self) { try JSON(parsing: line) }
    // The same a level further down, in a member of the params object.
    let inner = String(repeating: "[", count: 2047) + String(repeating: "]", count: 2047)
    let member = #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"store":"s","a":"# + inner + "}}"
    #expect(Self.read(member) == nil)
    #expect(throws: JSONParseError.self) { try JSON(parsing: member) }
  }

  /// Bytes that change what a line means when put anywhere in it.
  static let telling: [UInt8] = Array(#"{}[]":,\ 0-1.eEnu"#.utf8) + [0x00, 0x09, 0xC3, 0x7F]

  @Test("every truncation, deletion and one-byte change of a request: read right or left alone")
  func agreesUnderEveryOneByteChange() {
    var read = 0
    var cases = 0
    for text in Self.plainRequests + Self.leftToTheWholeParse {
      let line = Array(text.utf8)
      var variants: [[UInt8]] = []
      for at in line.indices {
        variants.append(Array(line[..<at]))
        variants.append(Array(line[..<at] + line[(at + 1)...]))
        for byte in Self.telling where byte != line[at] {
          var changed = line
          changed[at] = byte
          variants.append(changed)
          variants.append(Array(line[..<at] + [byte] + line[at...]))
        }
      }
      for variant in variants {
        cases += 1
        if variant.withUnsafeBytes({ RequestEnvelope(reading: $0) }) != nil { read += 1 }
        #expect(
          Self.agrees(variant), "\(String(decoding: variant, as: UTF8.self).debugDescription)")
      }
    }
    // The check above holds trivially for lines left alone; make sure many were read.
    #expect(cases > 100_000)
    #expect(read > cases / 20, "read \(read) of \(cases)")
  }
}

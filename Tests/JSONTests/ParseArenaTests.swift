import CJansson
import CJanssonArena
import Foundation
import JSON
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// `JSON(parsing:)` lets jansson allocate in a per-thread arena (CJanssonArena) and drops the
/// tree with the arena instead of `json_decref`. These tests check what that must not change:
/// values outlive the arena, large texts, errors, and jansson used outside a parse.
/// Each reads the arena's counters on the thread that parsed, with no suspension in between.
@Suite("Parsing: the jansson arena")
struct ParseArenaTests {
  @Test func valuesOutliveTheArenaOverManyLines() throws {
    // Each parse reuses the arena of the one before; every value must be an independent copy.
    var parsed: [JSON] = []
    for number in 0..<5_000 {
      let text =
        #"{"jsonrpc":"2.0","id":\#(number),"method":"m\#(number)","params":["#
        + #"{"key \#(number)":"a longer string value that is not small: \#(number)"}]}"#
      parsed.append(try JSON(parsing: text))
    }
    #expect(json_arena_last_overflow_blocks() == 0)
    for (number, value) in parsed.enumerated() {
      let expected: JSON = [
        "jsonrpc": "2.0", "id": .integer(Int64(number)), "method": .string("m\(number)"),
        "params": [
          .object(["key \(number)": .string("a longer string value that is not small: \(number)")])
        ],
      ]
      #expect(value == expected)
    }
  }

  @Test func aTextLargerThanTheArenaParsesInExtraBlocksThatAreThenFreed() throws {
    let strings = (0..<4_000).map { "string number \($0) with some padding to take room" }
    let text = "[" + strings.map { "\"\($0)\"" }.joined(separator: ",") + "]"
    let value = try JSON(parsing: text)
    let overflow = json_arena_last_overflow_blocks()
    #expect(overflow > 0)
    #expect(value == .array(strings.map { .string($0) }))
    // The next small text fits the first block again: the extra blocks went at the end.
    #expect(try JSON(parsing: #"{"a":[1,2,{"b":null}]}"#) == ["a": [1, 2, ["b": nil]]])
    #expect(json_arena_last_overflow_blocks() == 0)
    #expect(json_arena_retained_bytes() == 16 << 10)
  }

  @Test func errorsInsideTheArenaAreTheSameAndLeaveItUsable() throws {
    let cases: [(String, JSONParseError.Kind)] = [
      (#"{"a":1,"a":2}"#, .duplicateKey),
      (#"{"a":[1,2,"#, .unexpectedEnd),
      (#"[1,2,]"#, .syntax),
      (#"{"n":123456789012345678901234567890}"#, .numberOutOfRange),
      (String(repeating: "[", count: 3_000) + String(repeating: "]", count: 3_000), .tooDeep),
    ]
    for (text, kind) in cases {
      do {
        _ = try JSON(parsing: text)
        Issue.record("\(text.prefix(40)) parsed")
      } catch {
        #expect(error.kind == kind, "\(text.prefix(40))")
      }
    }
    #expect(throws: JSONParseError.self) {
      try JSON(parsing: [0x5B, 0x22, 0xC3, 0x28, 0x22, 0x5D])
    }
    #expect(try JSON(parsing: #"{"still":"works"}"#) == ["still": "works"])
    #expect(json_arena_last_overflow_blocks() == 0)
  }

  @Test func janssonOutsideAParseAllocatesWithMalloc() throws {
    // jansson's allocator hooks are process-wide: outside a window they must be malloc and
    // free, whatever thread calls them, and a window must not swallow the free of a value
    // made before it opened.
    let made = try #require(json_stringn("made outside a window", 21))
    #expect(!json_arena_owns(made))
    #expect(json_arena_begin())
    #expect(!json_arena_begin(), "windows do not nest")
    let inside = try #require(json_integer(7))
    #expect(json_arena_owns(inside))
    json_decref(made)  // freed by free(), not dropped as an arena pointer
    json_arena_end()
    let after = try #require(json_object())
    #expect(!json_arena_owns(after))
    #expect(json_object_set_new(after, "k", json_string("v")) == 0)
    #expect(json_object_size(after) == 1)
    json_decref(after)
  }

  @Test func theHooksAlignRefuseOverflowAndChainBlocks() throws {
    // jansson's hooks called directly, as jansson calls them, inside a window.
    var allocate: json_malloc_t?
    var release: json_free_t?
    json_get_alloc_funcs(&allocate, &release)
    let malloc = try #require(allocate)
    let free = try #require(release)
    #expect(json_arena_begin())
    defer { json_arena_end() }
    var previous: UInt = 0
    for size in [1, 7, 16, 17, 33, 100] {
      let pointer = try #require(malloc(size))
      let address = UInt(bitPattern: pointer)
      #expect(address % 16 == 0, "size \(size)")
      #expect(address >= previous, "no overlap with the one before")
      #expect(json_arena_owns(pointer))
      previous = address + UInt(size)
      free(pointer)  // a no-op: the next allocation does not reuse it
    }
    #expect(malloc(0) == nil)
    #expect(malloc(Int.max) == nil, "rounding up must not overflow into a small block")
    let large = try #require(malloc(100_000))
    #expect(json_arena_owns(large))
    UnsafeMutableRawPointer(large).initializeMemory(as: UInt8.self, repeating: 7, count: 100_000)
    #expect(json_arena_owns(try #require(malloc(16))))
  }

  @Test func aThreadThatNeverParsedHasNoArena() async throws {
    // A fresh thread's jansson calls go straight to malloc; its first parse makes its arena.
    let result = await withCheckedContinuation { (done: CheckedContinuation<[Int], Never>) in
      let thread = Thread {
        let before = json_arena_retained_bytes()
        let value = json_array()
        let owned = value.map { json_arena_owns($0) } ?? true
        json_decref(value)
        let parsed = try? JSON(parsing: "[1,2,3]")
        done.resume(returning: [
          before, owned ? 1 : 0, json_arena_retained_bytes(), parsed == [1, 2, 3] ? 1 : 0,
        ])
      }
      thread.start()
    }
    #expect(result == [0, 0, 16 << 10, 1])
  }
}

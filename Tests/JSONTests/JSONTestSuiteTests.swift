import JSON
import Testing

private let suiteFolder = "json-test-suite/test_parsing"

/// JSONTestSuite's `test_parsing` files, each read as raw bytes and handed whole to the line
/// entry point, `JSON(parsing:)`.
@Suite("JSONTestSuite (RFC 8259 parsing)", .enabled(if: TestData.shouldRun(suiteFolder)))
struct JSONTestSuiteTests {
  static let folder = suiteFolder
  static let names = TestData.fileNames(in: folder)

  /// `y_` files the line entry point rejects on purpose, and why.
  static let rejectedOnPurpose: [String: JSONParseError.Kind] = [
    // The protocol refuses ambiguous messages (-32600 "duplicate key") instead of picking a
    // value silently; both parse with `.allowDuplicateKeys`, checked below.
    "y_object_duplicated_key.json": .duplicateKey,
    "y_object_duplicated_key_and_value.json": .duplicateKey,
  ]

  @Test("the folder holds the whole suite (95 y_, 188 n_, 35 i_)")
  func folderIsComplete() {
    #expect(Self.names.filter { $0.hasPrefix("y_") }.count == 95)
    #expect(Self.names.filter { $0.hasPrefix("n_") }.count == 188)
    #expect(Self.names.filter { $0.hasPrefix("i_") }.count == 35)
  }

  @Test(
    "y_ files parse, and parse again from their serialization",
    arguments: names.filter { $0.hasPrefix("y_") })
  func accepts(_ name: String) throws {
    let bytes = try TestData.bytes(Self.folder, name)
    if let kind = Self.rejectedOnPurpose[name] {
      #expect(throws: JSONParseError.self) { try JSON(parsing: bytes) }
      do {
        _ = try JSON(parsing: bytes)
      } catch {
        #expect(error.kind == kind)
      }
      if kind == .duplicateKey {
        #expect(throws: Never.self) { try JSON(parsing: bytes, options: .allowDuplicateKeys) }
        // Refused with the member's place, and the rest still readable.
        do {
          _ = try JSON(parsing: bytes)
        } catch {
          #expect(error.refusals.map(\.pointer) == [JSONPointer(tokens: ["a"])])
          #expect(error.remainder?.objectValue?.keys == ["a"])
        }
      }
      return
    }
    let value = try JSON(parsing: bytes)
    #expect(try JSON(parsing: value.serialized()) == value)
  }

  @Test(
    "n_ files are rejected with a located, readable error",
    arguments: names.filter { $0.hasPrefix("n_") })
  func rejects(_ name: String) throws {
    let bytes = try TestData.bytes(Self.folder, name)
    do {
      let value = try JSON(parsing: bytes)
      Issue.record("\(name) parsed as \(value)")
    } catch {
      #expect(!error.reason.isEmpty)
      #expect(error.line >= 1)
      #expect((0...bytes.count).contains(error.position), "\(error)")
    }
  }

  @Test(
    "i_ files parse or fail cleanly, never crash", arguments: names.filter { $0.hasPrefix("i_") })
  func decidesCleanly(_ name: String) throws {
    let bytes = try TestData.bytes(Self.folder, name)
    let value: JSON
    do {
      value = try JSON(parsing: bytes)
    } catch {
      #expect(!error.reason.isEmpty)
      #expect((0...bytes.count).contains(error.position), "\(error)")
      return
    }
    #expect(try JSON(parsing: value.serialized()) == value)
  }

  @Test("y_object_escaped_null_in_key: a NUL in a key is kept (read again in Swift)")
  func nulInKey() throws {
    let value = try JSON(
      parsing: try TestData.bytes(Self.folder, "y_object_escaped_null_in_key.json"))
    #expect(value == ["foo\u{0}bar": 42])
  }

  @Test("n_multidigit_number_then_00: a NUL after a number is an error of its own kind")
  func multidigitNumberThenNul() throws {
    let bytes = try TestData.bytes(Self.folder, "n_multidigit_number_then_00.json")
    #expect(bytes == [0x31, 0x32, 0x33, 0x00])
    #expect(
      throws: JSONParseError(
        kind: .nulByte, line: 1, column: 4, position: 4,
        reason: "a raw NUL byte (0x00) is not allowed in JSON text; write \"\\u0000\" in a string")
    ) { try JSON(parsing: bytes) }
  }
}

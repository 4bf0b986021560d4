import CJansson
import Testing

@testable import JSON

/// The Swift parser against jansson, the C parser the project used before it: on JSONTestSuite
/// and on every truncation and one-byte change of a set of requests, both accept the same texts
/// and read them to the same values. The only differences are deliberate: a key holding
/// `\u0000` (jansson cannot store one), and a raw NUL after a number or literal (jansson drops
/// it; we refuse every raw NUL).
@Suite("Parsing: the Swift parser agrees with jansson")
struct JanssonAgreementTests {
  /// jansson's value, or nil when it refuses the text.
  static func jansson(_ bytes: [UInt8]) -> JSON? {
    let flags = Int(JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES)
    var error = json_error_t()
    let root = bytes.withUnsafeBytes { raw in
      json_loadb(raw.baseAddress?.assumingMemoryBound(to: CChar.self), raw.count, flags, &error)
    }
    guard let root else { return nil }
    defer { json_decref(root) }
    return convert(root)
  }

  static func convert(_ value: UnsafeMutablePointer<json_t>) -> JSON {
    switch value.pointee.type {
    case JSON_OBJECT:
      var object = JSONObject()
      var iterator = json_object_iter(value)
      while let member = iterator {
        guard let key = json_object_iter_key(member), let child = json_object_iter_value(member)
        else { break }
        let keyBytes = UnsafeRawBufferPointer(start: key, count: json_object_iter_key_len(member))
        object.appendUnindexed(String(decoding: keyBytes, as: UTF8.self), convert(child))
        iterator = json_object_iter_next(value, member)
      }
      object.reindex()
      return .object(object)
    case JSON_ARRAY:
      let elements = (0..<json_array_size(value)).compactMap { json_array_get(value, $0) }
      return .array(elements.map(convert))
    case JSON_STRING:
      let utf8 = UnsafeRawBufferPointer(
        start: json_string_value(value), count: json_string_length(value))
      return .string(String(decoding: utf8, as: UTF8.self))
    case JSON_INTEGER: return .integer(Int64(json_integer_value(value)))
    case JSON_REAL: return .double(json_real_value(value))
    case JSON_TRUE: return .bool(true)
    case JSON_FALSE: return .bool(false)
    default: return .null
    }
  }

  static func ours(_ bytes: [UInt8]) -> JSON? { try? JSON(parsing: bytes) }

  /// Whether the two parsers may differ on `bytes`, by design.
  static func differsByDesign(_ bytes: [UInt8]) -> Bool {
    bytes.contains(0) || String(decoding: bytes, as: UTF8.self).contains("\\u0000")
  }

  func check(_ bytes: [UInt8], _ label: @autoclosure () -> String) {
    guard !Self.differsByDesign(bytes) else { return }
    let theirs = Self.jansson(bytes)
    let mine = Self.ours(bytes)
    #expect(
      (theirs == nil) == (mine == nil),
      "\(label()): jansson \(String(describing: theirs)), ours \(String(describing: mine))")
    if let theirs, let mine {
      #expect(theirs == mine, "\(label())")
      #expect(theirs.objectValue?.keys == mine.objectValue?.keys, "member order: \(label())")
    }
  }

  @Test func jsonTestSuite() throws {
    let folder = JSONTestSuiteTests.folder
    guard TestData.shouldRun(folder) else { return }
    for name in JSONTestSuiteTests.names {
      check(try TestData.bytes(folder, name), name)
    }
  }

  static let requests: [String] = [
    #"{"jsonrpc":"2.0","id":12345,"method":"dispatch","params":{"store":"counter","action":{"type":"increment"}}}"#,
    #"{"jsonrpc":"2.0","id":"a\"b","method":"state/get","params":{"store":"cart","path":"/items/0"}}"#,
    #"[{"jsonrpc":"2.0","id":-1.5e3,"method":"x"},{"a":[true,false,null,0,-0,1E2,0.25]}]"#,
    #"{"k\u00e9y":"Z\u00f6e \ud83d\ude00","n":9223372036854775807,"m":-9223372036854775808}"#,
    " { \"spaced\" : [ 1 , 2 ] , \"tab\":\t\"\\t\\n\\r\\b\\f\\/\" } ",
    "{\"utf8\":\"Jürgen 李雷 😀\",\"x\":[[[[]]]],\"y\":{}}",
  ]

  @Test func everyTruncationAndOneByteChangeOfRequests() {
    let replacements: [UInt8] = Array(#"{}[]":,\0"#.utf8) + [0x20, 0x0A, 0x80, 0xC3, 0xFF, 0x61]
    for request in Self.requests {
      let bytes = Array(request.utf8)
      check(bytes, request)
      for end in 0..<bytes.count { check(Array(bytes[..<end]), "prefix \(end) of \(request)") }
      for position in bytes.indices {
        var deleted = bytes
        deleted.remove(at: position)
        check(deleted, "without byte \(position) of \(request)")
        for replacement in replacements where replacement != bytes[position] {
          var changed = bytes
          changed[position] = replacement
          check(changed, "byte \(position) as \(replacement) in \(request)")
        }
      }
    }
  }
}

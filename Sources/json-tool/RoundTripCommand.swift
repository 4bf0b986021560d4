// `json-tool roundtrip LINES.ndjson [--writer swift|jansson] [--parse-only]`: the Swift side of
// bench/json/run.sh. Reads the file into memory, then for every line parses it with
// `JSON(parsing:)` and writes it back (compact, plus "\n") into a 1 MiB buffer flushed to
// stdout. Only that loop is timed; prints "lines seconds lines_per_second errors=N" on stderr,
// exactly like bench/json/jansson_roundtrip.c.
//
// `--writer jansson` converts each value to a jansson tree and calls `json_dumpb` instead of
// our Swift writer: the measurement that chose the writer (see JSONWriter.swift).
import CJansson
import Foundation
import JSON

enum RoundTripCommand {
  enum Writer { case swift, jansson }

  static func run(_ arguments: [String]) -> Int32 {
    var path: String?
    var writer = Writer.swift
    var parseOnly = false
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      switch argument {
      case "--writer":
        switch rest.popFirst() {
        case "swift": writer = .swift
        case "jansson": writer = .jansson
        default: return usage()
        }
      case "--parse-only": parseOnly = true
      default:
        guard path == nil else { return usage() }
        path = argument
      }
    }
    guard let path, let data = FileManager.default.contents(atPath: path) else { return usage() }
    let input = [UInt8](data)

    var output: [UInt8] = []
    output.reserveCapacity(Self.capacity + 4096)
    var lines = 0
    var errors = 0
    let clock = ContinuousClock()
    let start = clock.now
    input.withUnsafeBytes { all in
      var lineStart = 0
      while lineStart < all.count {
        // memchr, as the C program splits its lines, so the two loops differ only in the codec.
        let rest = all.count - lineStart
        let lineEnd =
          all.baseAddress.flatMap { base in
            memchr(base + lineStart, 0x0A, rest).map { base.distance(to: UnsafeRawPointer($0)) }
          } ?? all.count
        let line = UnsafeRawBufferPointer(rebasing: all[lineStart..<lineEnd])
        lineStart = lineEnd + 1
        lines += 1
        do {
          let value = try JSON(parsing: line)
          if parseOnly { continue }
          switch writer {
          case .swift: try value.write(to: &output)
          case .jansson: try JanssonTree.dump(value, to: &output)
          }
          output.append(0x0A)
        } catch {
          errors += 1
        }
        if output.count >= Self.capacity { flush(&output) }
      }
    }
    flush(&output)
    let seconds = Double((clock.now - start) / .nanoseconds(1)) / 1e9
    let rate = Double(lines) / seconds
    FileHandle.standardError.write(
      Data("\(lines) \(String(format: "%.6f", seconds)) \(Int(rate)) errors=\(errors)\n".utf8))
    return errors == 0 ? 0 : 1
  }

  static let capacity = 1 << 20

  static func flush(_ output: inout [UInt8]) {
    output.withUnsafeBytes { bytes in
      var offset = 0
      while offset < bytes.count {
        let written = write(1, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          return
        }
        offset += written
      }
    }
    output.removeAll(keepingCapacity: true)
  }

  static func usage() -> Int32 {
    FileHandle.standardError.write(
      Data(
        "usage: json-tool roundtrip LINES.ndjson [--writer swift|jansson] [--parse-only]\n".utf8))
    return 2
  }
}

/// Our `JSON` as a jansson tree, for measuring `json_dumpb` against the Swift writer.
enum JanssonTree {
  struct Unwritable: Error {}

  static func dump(_ value: JSON, to output: inout [UInt8]) throws {
    guard let tree = make(value) else { throw Unwritable() }
    defer { json_decref(tree) }
    let flags = Int(JSON_COMPACT | JSON_ENCODE_ANY)
    // One dump into scratch space, as the C program dumps into its buffer; a line that does not
    // fit is dumped again into a buffer of its size.
    let size = json_dumpb(tree, scratch.baseAddress, scratch.count, flags)
    guard size > 0 else { throw Unwritable() }
    if size <= scratch.count {
      output.append(contentsOf: UnsafeRawBufferPointer(start: scratch.baseAddress, count: size))
      return
    }
    let start = output.count
    output.append(contentsOf: repeatElement(0, count: size))
    _ = output.withUnsafeMutableBytes { bytes in
      json_dumpb(tree, bytes.baseAddress.map { ($0 + start) }, size, flags)
    }
  }

  /// json-tool is single-threaded, and this buffer is only touched from `dump`.
  nonisolated(unsafe) static let scratch = UnsafeMutableBufferPointer<CChar>.allocate(
    capacity: 1 << 16)

  static func make(_ value: JSON) -> UnsafeMutablePointer<json_t>? {
    switch value {
    case .null: return json_null()
    case .bool(let flag): return flag ? json_true() : json_false()
    case .integer(let integer): return json_integer(json_int_t(integer))
    case .double(let double): return json_real(double)
    case .string(let string):
      var string = string
      return string.withUTF8 { utf8 in
        utf8.withMemoryRebound(to: CChar.self) { json_stringn_nocheck($0.baseAddress, $0.count) }
      }
    case .array(let elements):
      let array = json_array()
      for element in elements { json_array_append_new(array, make(element)) }
      return array
    case .object(let object):
      let tree = json_object()
      for (key, member) in object.members {
        var key = key
        key.withUTF8 { utf8 in
          utf8.withMemoryRebound(to: CChar.self) {
            _ = json_object_setn_new_nocheck(tree, $0.baseAddress, $0.count, make(member))
          }
        }
      }
      return tree
    }
  }
}

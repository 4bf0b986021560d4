import CJansson
import CJanssonArena

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension JSON {
  /// The object or array that starts `bytes`, parsed by jansson, and how many bytes it took:
  /// for a caller that reads the text around it itself (the server's request framing,
  /// `RequestEnvelope`), so that jansson parses only the value and not the text around it.
  ///
  /// `nil`, for the caller to parse the whole text with ``init(parsing:options:)`` (which says
  /// why it fails, if it does), when anything but `{` or `[` starts `bytes`, when jansson
  /// refuses the value (a syntax error, a repeated key, a number out of range), when a raw NUL
  /// byte is among the bytes it took (jansson skips one after a number), and when the value
  /// could nest deeper than ``maximumDepth`` allows inside the `levelsAbove` levels around it.
  /// A value succeeds here only when the same value inside the whole text would parse to it.
  package static func parsingLeadingStructure(
    _ bytes: UnsafeRawBufferPointer, levelsAbove: Int
  ) -> (value: JSON, count: Int)? {
    guard let base = bytes.baseAddress, let first = bytes.first, first == 0x7B || first == 0x5B
    else { return nil }
    // Rejecting duplicates and keeping `\u0000`, as `init(parsing:)` does by default.
    let flags = Int(JSON_DISABLE_EOF_CHECK | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES)
    var error = json_error_t()
    let inArena = json_arena_begin()
    defer { if inArena { json_arena_end() } }
    guard
      let root = json_loadb(base.assumingMemoryBound(to: CChar.self), bytes.count, flags, &error)
    else { return nil }
    defer { if !inArena { json_decref(root) } }
    // With JSON_DISABLE_EOF_CHECK jansson reports in `position` the bytes it read, which end at
    // the closing bracket.
    let count = Int(error.position)
    // Each level takes an opening and a closing byte, so a value shorter than this cannot nest
    // past the limit; a longer one is left to the whole parse rather than measured.
    guard count > 0, count <= bytes.count, count < 2 * (maximumDepth - levelsAbove - 1),
      memchr(base, 0, count) == nil
    else { return nil }
    return (JSON(converting: root, strings: JSONStringCache.current), count)
  }
}

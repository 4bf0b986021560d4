#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension JSON {
  /// The object or array that starts `bytes`, and how many bytes it took: for a caller that
  /// reads the text around it itself (the server's request framing, `RequestEnvelope`).
  ///
  /// `nil`, for the caller to parse the whole text with ``init(parsing:options:)`` (which says
  /// why it fails, if it does), when anything but `{` or `[` starts `bytes`, when the value is
  /// refused (a syntax error, a repeated key, a number out of range), when a raw NUL byte is
  /// among the bytes it took, and when the value could nest deeper than ``maximumDepth``
  /// allows inside the `levelsAbove` levels around it. A value succeeds here only when the same
  /// value inside the whole text would parse to it.
  package static func parsingLeadingStructure(
    _ bytes: UnsafeRawBufferPointer, levelsAbove: Int
  ) -> (value: JSON, count: Int)? {
    guard let base = bytes.baseAddress, let first = bytes.first, first == 0x7B || first == 0x5B
    else { return nil }
    // The parser itself refuses to open more containers than the levels around it leave, so
    // the whole text's limit holds without measuring the value first.
    let depthLimit = maximumDepth - levelsAbove
    guard depthLimit > 0,
      var parser = JSONParser(bytes, allowDuplicateKeys: false, depthLimit: depthLimit),
      let value = try? parser.parseValue(), parser.refusals.isEmpty
    else { return nil }
    let count = parser.offset
    guard memchr(base, 0, count) == nil else { return nil }
    return (value, count)
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension JSON {
  /// The bytes' value with each array under `prefix` of at least ``deferredArrayBytes`` left
  /// as text (an empty array in its place, listed in the result), or nil when the text does
  /// not parse as it stands, holds a refused member or a NUL byte: the caller then parses it
  /// whole with ``init(parsing:options:)``, which says what is wrong. The arrays left are not
  /// checked here (``DeferredArrays`` says how they are).
  package static func parsingDeferringArrays(
    _ bytes: UnsafeRawBufferPointer, under prefix: [String]
  )
    -> (value: JSON, arrays: [DeferredArrays.Array])?
  {
    guard let base = bytes.baseAddress, memchr(base, 0, bytes.count) == nil,
      var parser = JSONParser(bytes, allowDuplicateKeys: false)
    else { return nil }
    parser.deferral = JSONParser.Deferral(prefix: prefix, minimumBytes: deferredArrayBytes)
    guard let value = try? parser.parseText(), parser.refusals.isEmpty else { return nil }
    return (value, parser.deferred)
  }

  /// How long an array's text must be to be left as text; tests lower it.
  @TaskLocal package static var deferredArrayBytes = 1 << 20
}

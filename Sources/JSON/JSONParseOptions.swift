/// Options of ``JSON/init(parsing:options:)-(UnsafeRawBufferPointer,_)``.
///
/// The default (`[]`) is what the server uses for every incoming line: duplicate keys are an
/// error of their own kind.
public struct JSONParseOptions: OptionSet, Sendable, Hashable {
  /// The option bits.
  public let rawValue: Int
  /// Options from their bits.
  public init(rawValue: Int) { self.rawValue = rawValue }

  /// Accept an object with a repeated key; the last value wins (at the first key's position).
  /// For loading third-party files (the json-patch test records repeat `"op"` on purpose), never
  /// for protocol input.
  ///
  /// ```swift
  /// try JSON(parsing: #"{"a":1,"a":2}"#, options: .allowDuplicateKeys)  // ["a": 2]
  /// ```
  public static let allowDuplicateKeys = JSONParseOptions(rawValue: 1 << 0)

  /// The bytes may be given back to the system as they are parsed (`madvise`), so a large
  /// text's memory shrinks while its tree grows: only for bytes the caller owns in memory it
  /// allocated (the server's read buffer) and never reads again. Errors still report their line
  /// and column, counted before each stretch goes.
  package static let discardsParsedBytes = JSONParseOptions(rawValue: 1 << 1)
}

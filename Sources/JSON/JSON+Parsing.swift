#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension JSON {
  /// The deepest nesting that parses (jansson's limit) and that ``serialized()`` writes, so
  /// whatever we write we can read back. Levels are counted as jansson counts them: the root is
  /// level 1 and a scalar is a level too, so 2048 nested empty arrays parse, and 2047 nested
  /// arrays around a number do.
  public static let maximumDepth = 2048

  /// Parses one complete JSON text: the entry point for a line the server reads (a plain
  /// request's framing is read by the server itself, and only the values inside it parsed
  /// here, by ``parsingLeadingStructure(_:levelsAbove:)``), and for every error it reports.
  ///
  /// Any value parses at the top level (a scalar line is a well-formed but invalid request, not
  /// a parse error). `"\u0000"` inside strings and keys survives. Rejected, each with its own
  /// ``JSONParseError/Kind-swift.enum``: a raw NUL byte anywhere, repeated object keys (unless
  /// `options` contains ``JSONParseOptions/allowDuplicateKeys``), integers outside `Int64`,
  /// numbers beyond `Double`, nesting past ``maximumDepth``, invalid UTF-8, lone surrogate
  /// escapes, a byte order mark. For the refused members of otherwise well-formed text (a
  /// repeated key, a number out of range) the error's ``JSONParseError/refusals`` and
  /// ``JSONParseError/remainder`` say where they are and what the rest holds.
  ///
  /// ```swift
  /// let line: [UInt8] = Array(#"{"jsonrpc":"2.0","id":1,"method":"store/list"}"#.utf8)
  /// let message = try line.withUnsafeBytes { try JSON(parsing: $0) }
  /// message["method"]  // .string("store/list")
  /// ```
  public init(
    parsing bytes: UnsafeRawBufferPointer, options: JSONParseOptions = []
  ) throws(JSONParseError) {
    guard let base = bytes.baseAddress, !bytes.isEmpty else {
      throw JSONParseError(
        kind: .unexpectedEnd, line: 1, column: 0, position: 0,
        reason: "the input is empty; expected a JSON value")
    }
    // A raw NUL is refused wherever it is, even inside text that would otherwise parse: memchr
    // finds one faster than the parser could check each byte for it.
    let nul = memchr(base, 0, bytes.count).map { base.distance(to: UnsafeRawPointer($0)) }
    // A NUL's place is counted from the start after the parse, so a text holding one (which
    // fails anyway) keeps its bytes.
    let discardLimit =
      options.contains(.discardsParsedBytes) ? (nul == nil ? bytes.count : 0) : nil
    guard
      var parser = JSONParser(
        bytes, allowDuplicateKeys: options.contains(.allowDuplicateKeys),
        discardingBefore: discardLimit)
    else { throw JSONParseError(.unexpectedEnd, "the input is empty", position: 0, in: bytes) }
    let value: JSON
    do {
      value = try parser.parseText()
    } catch {
      // A NUL at or before where the parser stopped is the real culprit (it reads a raw NUL
      // inside a string as a control character).
      if let nul, nul <= error.position { throw JSONParseError(nulAt: nul, in: bytes) }
      if error.position <= 3, bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
        var error = error
        error.reason = "a byte order mark (U+FEFF) at the start is not allowed in JSON text"
        throw error
      }
      throw error
    }
    if let nul { throw JSONParseError(nulAt: nul, in: bytes) }
    guard let first = parser.refusals.first else {
      self = value
      return
    }
    var error: JSONParseError
    if let (line, column) = first.location {
      error = JSONParseError(
        kind: first.member.kind, line: line, column: column, position: first.position,
        reason: first.member.reason)
    } else {
      error = JSONParseError(
        first.member.kind, first.member.reason, position: first.position, in: bytes)
    }
    error.refusals = parser.refusals.map(\.member)
    error.remainder = value
    throw error
  }

  /// Parses the bytes of a JSON text; see ``init(parsing:options:)-(UnsafeRawBufferPointer,_)``.
  public init(parsing bytes: [UInt8], options: JSONParseOptions = []) throws(JSONParseError) {
    // withUnsafeBytes rethrows untyped errors, so the outcome travels out as a Result.
    let result = bytes.withUnsafeBytes { raw in
      Result { () throws(JSONParseError) in try JSON(parsing: raw, options: options) }
    }
    self = try result.get()
  }

  /// Parses a JSON text; see ``init(parsing:options:)-(UnsafeRawBufferPointer,_)``.
  ///
  /// ```swift
  /// try JSON(parsing: #"{"quantity": 2}"#)["quantity"]  // .integer(2)
  /// ```
  public init(parsing text: String, options: JSONParseOptions = []) throws(JSONParseError) {
    var text = text
    let result = text.withUTF8 { utf8 in
      Result { () throws(JSONParseError) in
        try JSON(parsing: UnsafeRawBufferPointer(utf8), options: options)
      }
    }
    self = try result.get()
  }
}

extension JSONParseError {
  /// `kind` and `reason` at byte `position` (bytes read so far); lines are counted by `\n`,
  /// columns by UTF-8 characters.
  init(
    _ kind: Kind, _ reason: String, position: Int, in input: UnsafeRawBufferPointer
  ) {
    var line = 1
    var column = 0
    for byte in input[..<min(position, input.count)] {
      if byte == 0x0A {
        line += 1
        column = 0
      } else if byte & 0xC0 != 0x80 {
        column += 1
      }
    }
    self.init(kind: kind, line: line, column: column, position: position, reason: reason)
  }

  /// A raw NUL byte at byte `offset`: line and column counted as jansson counts them (lines
  /// by `\n`, columns by UTF-8 characters).
  init(nulAt offset: Int, in input: UnsafeRawBufferPointer) {
    var line = 1
    var column = 0
    for byte in input[..<offset] {
      if byte == 0x0A {
        line += 1
        column = 0
      } else if byte & 0xC0 != 0x80 {
        column += 1
      }
    }
    self.init(
      kind: .nulByte, line: line, column: column + 1, position: offset + 1,
      reason: "a raw NUL byte (0x00) is not allowed in JSON text; write \"\\u0000\" in a string")
  }
}

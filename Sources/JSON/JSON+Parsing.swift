import CJansson
import CJanssonArena

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
    var flags = Int(JSON_DECODE_ANY | JSON_ALLOW_NUL)
    if !options.contains(.allowDuplicateKeys) { flags |= Int(JSON_REJECT_DUPLICATES) }
    var error = json_error_t()
    // jansson allocates the tree in this thread's arena (CJanssonArena.h): no malloc and free
    // per token and value, and no `json_decref`; the window ends when this initializer returns,
    // after the tree is copied into `self`. `false` only when a window is already open, which
    // nothing here does; the tree is then released the ordinary way.
    let inArena = json_arena_begin()
    defer { if inArena { json_arena_end() } }
    let root = json_loadb(base.assumingMemoryBound(to: CChar.self), bytes.count, flags, &error)
    // jansson drops a raw NUL that follows a number or literal (`123\0`, `[1\0]`), so look for
    // one ourselves; memchr is vectorized, a negligible cost next to the parse.
    let nul = memchr(base, 0, bytes.count).map { base.distance(to: UnsafeRawPointer($0)) }
    guard let root else {
      let failure = JSONParseError(jansson: error, input: bytes)
      // A NUL at or just past where jansson stopped is the real culprit (it reports a raw
      // NUL inside a string as a control character at the string so far).
      if let nul, nul <= failure.position { throw JSONParseError(nulAt: nul, in: bytes) }
      switch failure.kind {
      case .nulInKey, .duplicateKey, .numberOutOfRange:
        // Possibly well-formed text jansson cannot hold or refuses: parse it again in Swift,
        // which keeps a NUL in a key and reads past refused members, so the caller learns
        // where each one is and can still read the rest (a request's id).
        if let nul { throw JSONParseError(nulAt: nul, in: bytes) }
        self = try JSON(recovering: bytes, options: options)
        return
      default:
        throw failure
      }
    }
    defer { if !inArena { json_decref(root) } }
    if let nul { throw JSONParseError(nulAt: nul, in: bytes) }
    self = JSON(converting: root, strings: JSONStringCache.current)
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

  /// The value of a text jansson refused, from ``JSONRecoveringParser``: the value itself when
  /// nothing in it is refused (a NUL in a key), else an error that carries every refused member's
  /// pointer and the value with `null` in their places.
  private init(recovering bytes: UnsafeRawBufferPointer, options: JSONParseOptions)
    throws(JSONParseError)
  {
    let (value, refusals) = try JSONRecoveringParser.parse(
      bytes, allowDuplicateKeys: options.contains(.allowDuplicateKeys))
    guard let first = refusals.first else {
      self = value
      return
    }
    var error = JSONRecoveringParser.error(
      first.member.kind, first.member.reason, position: first.position, in: bytes)
    error.refusals = refusals.map(\.member)
    error.remainder = value
    throw error
  }

  /// Copies a jansson tree into a `JSON` value. Strings and keys are read with their length, so
  /// `\u0000` inside them is kept; short ones come from `strings` when seen before. The tree's
  /// depth is bounded by the parser, so recursion is.
  init(converting value: UnsafeMutablePointer<json_t>, strings: JSONStringCache) {
    switch value.pointee.type {
    case JSON_OBJECT:
      // One allocation for the whole object; jansson's keys are distinct (a repeated key either
      // failed the parse or replaced the earlier value), so no duplicate check.
      var object = JSONObject(reservingCapacity: json_object_size(value))
      var iterator = json_object_iter(value)
      while let member = iterator {
        guard let key = json_object_iter_key(member), let child = json_object_iter_value(member)
        else { break }
        let keyBytes = UnsafeRawBufferPointer(start: key, count: json_object_iter_key_len(member))
        object.appendUnindexed(strings.string(keyBytes), JSON(converting: child, strings: strings))
        iterator = json_object_iter_next(value, member)
      }
      object.reindex()
      self = .object(object)
    case JSON_ARRAY:
      let count = json_array_size(value)
      var elements: [JSON] = []
      elements.reserveCapacity(count)
      for position in 0..<count {
        guard let child = json_array_get(value, position) else { break }
        elements.append(JSON(converting: child, strings: strings))
      }
      self = .array(elements)
    case JSON_STRING:
      let utf8 = UnsafeRawBufferPointer(
        start: json_string_value(value), count: json_string_length(value))
      self = strings.value(utf8)
    case JSON_INTEGER:
      self = .integer(Int64(json_integer_value(value)))
    case JSON_REAL:
      self = .double(json_real_value(value))
    case JSON_TRUE:
      self = .bool(true)
    case JSON_FALSE:
      self = .bool(false)
    default:
      self = .null
    }
  }
}

extension JSONParseError {
  /// Translates jansson's report; its text already names the offending token ("near 'x'").
  init(jansson error: json_error_t, input: UnsafeRawBufferPointer) {
    var error = error
    let kind: Kind
    switch json_error_code(&error) {
    case json_error_invalid_utf8: kind = .invalidUTF8
    case json_error_premature_end_of_input: kind = .unexpectedEnd
    case json_error_null_character: kind = .nulByte
    case json_error_null_byte_in_key: kind = .nulInKey
    case json_error_duplicate_key: kind = .duplicateKey
    case json_error_numeric_overflow: kind = .numberOutOfRange
    case json_error_stack_overflow: kind = .tooDeep
    case json_error_out_of_memory: kind = .outOfMemory
    default: kind = .syntax
    }
    var reason = withUnsafeBytes(of: error.text) { text in
      String(decoding: text.prefix { $0 != 0 }, as: UTF8.self)
    }
    if input.starts(with: [0xEF, 0xBB, 0xBF]) {
      reason = "a byte order mark (U+FEFF) at the start is not allowed in JSON text"
    } else if kind == .tooDeep {
      reason += " (values nest at most \(JSON.maximumDepth) levels deep, scalars included)"
    } else if kind == .numberOutOfRange, reason.hasPrefix("too big integer") {
      reason += " (integers must fit in 64 bits)"
    }
    self.init(
      kind: kind, line: Int(error.line), column: Int(error.column),
      position: Int(error.position), reason: reason)
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

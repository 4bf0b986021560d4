/// The one JSON text parser: bytes in, a `JSON` value or a `JSONParseError` out.
///
/// It reads RFC 8259 strictly (no comments, no trailing commas, strict UTF-8, no lone surrogate
/// escapes, nesting at most ``JSON/maximumDepth`` levels) in a single pass. Members of
/// well-formed text that cannot be held (a repeated key, a number outside `Int64` or `Double`)
/// do not stop it: each is recorded as a refusal with its pointer, `null` takes its place, and
/// parsing goes on, so a caller can still read the rest of a message (a request's `id`).
///
/// Containers are read iteratively, with the values of every open container on one stack
/// (`PendingValues`), so the nesting limit does not depend on the calling thread's stack size,
/// and a closing bracket moves its values into their array or object without copying them.
struct JSONParser: ~Copyable {
  /// A refused member, and how many bytes had been read when it was found.
  struct Refusal {
    var member: JSONParseError.Refusal
    var position: Int
    /// Line and column of `position`, counted when it was found, for the first refusal of a
    /// parse that gives its bytes back as it goes (they cannot be counted afterwards).
    var location: (line: Int, column: Int)?
  }

  /// An array or object whose members are still being read.
  struct Frame {
    var isObject: Bool
    /// Where this container's values start on the value stack.
    var valueStart: Int
    /// Where this object's keys start on the key stack.
    var keyStart: Int
    /// Key to position, built only once an object has more keys than a scan should compare.
    var index: [String: Int]?
  }

  /// Past this many keys, the repeated-key check hashes instead of comparing each key.
  private static let scanLimit = 8

  let bytes: UnsafeRawBufferPointer
  let start: UnsafePointer<UInt8>
  private let allowDuplicateKeys: Bool
  /// How many containers may be open at once: ``JSON/maximumDepth`` for a whole text, fewer for
  /// a value read inside levels its caller already counted.
  private let depthLimit: Int
  var offset = 0
  private(set) var frames: [Frame] = []
  private var values = PendingValues()
  private var keys: [String] = []
  private(set) var refusals: [Refusal] = []
  /// The bytes of a string with escapes, kept between strings to reuse its allocation.
  var scratch: [UInt8] = []
  /// Short strings this thread's parses met before.
  let strings = JSONStringCache.current
  /// Whether the bytes before the offset are given back to the system as the parse goes
  /// (JSONParser+Discarding.swift), and the bytes from this offset on must be kept.
  let discardLimit: Int?
  /// Which large arrays are left as text (``DeferredArrays``), and those left so far.
  var deferral: Deferral?
  var deferred: [DeferredArrays.Array] = []
  /// The bytes before this offset may be gone; the location of an error is counted from here.
  var kept = 0
  /// Line and column (as ``JSONParseError`` counts them) of the byte at `kept`.
  var keptLocation = (line: 1, column: 0)
  /// The offset past which the next pages are given back.
  var nextDiscard = Int.max

  /// A parser of `bytes`; nil when they have no address (an empty buffer may not).
  init?(
    _ bytes: UnsafeRawBufferPointer, allowDuplicateKeys: Bool,
    depthLimit: Int = JSON.maximumDepth, discardingBefore discardLimit: Int? = nil
  ) {
    guard let base = bytes.baseAddress else { return nil }
    self.depthLimit = depthLimit
    self.discardLimit = discardLimit
    if discardLimit != nil { nextDiscard = Self.discardStep }
    self.bytes = bytes
    self.start = base.assumingMemoryBound(to: UInt8.self)
    self.allowDuplicateKeys = allowDuplicateKeys
  }

  /// The whole text's value (refused members as `null`); trailing bytes other than white space
  /// are a syntax error.
  mutating func parseText() throws(JSONParseError) -> JSON {
    skipWhitespace()
    let value = try parseValue()
    skipWhitespace()
    if offset < bytes.count { throw failure(.syntax, "end of file expected") }
    return value
  }

  // MARK: Values

  /// Reads one value starting at the offset, and leaves the offset just past it.
  mutating func parseValue() throws(JSONParseError) -> JSON {
    parsing: while true {
      var value: JSON
      if frames.count >= depthLimit {
        offset += 1
        throw failure(
          .tooDeep,
          "maximum parsing depth reached (values nest at most \(JSON.maximumDepth) levels "
            + "deep, scalars included)")
      }
      guard offset < bytes.count else {
        throw failure(.unexpectedEnd, "unexpected end of input")
      }
      switch start[offset] {
      case UInt8(ascii: "{"):
        offset += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
          offset += 1
          value = .object(JSONObject())
        } else {
          frames.append(
            Frame(isObject: true, valueStart: values.count, keyStart: keys.count, index: nil))
          try parseKey()
          continue
        }
      case UInt8(ascii: "["):
        if let deferral, bytes.count - offset >= deferral.minimumBytes, deferArray(deferral) {
          value = .array([])
        } else {
          offset += 1
          skipWhitespace()
          if peek() == UInt8(ascii: "]") {
            offset += 1
            value = .array([])
          } else {
            frames.append(
              Frame(isObject: false, valueStart: values.count, keyStart: keys.count, index: nil))
            continue
          }
        }
      case UInt8(ascii: "\""): value = try parseStringValue()
      case UInt8(ascii: "t"): value = try literal("true", .bool(true))
      case UInt8(ascii: "f"): value = try literal("false", .bool(false))
      case UInt8(ascii: "n"): value = try literal("null", .null)
      case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): value = try parseNumber()
      default: throw invalidToken()
      }
      // A value is complete: hand it to its container, closing every container it completes.
      // It is moved, not copied (a retain and a release per value): each way on either sets
      // `value` again, reads the next value, or throws.
      while let frame = frames.last {
        if frame.isObject {
          add(member: consume value)
          if offset >= nextDiscard { discardParsed() }
          skipWhitespace()
          switch next() {
          case UInt8(ascii: ","):
            skipWhitespace()
            try parseKey()
            continue parsing
          case UInt8(ascii: "}"):
            value = .object(closeObject())
            continue
          case nil: throw failure(.unexpectedEnd, "'}' expected")
          default: throw failure(.syntax, "'}' expected")
          }
        } else {
          values.push(consume value)
          if offset >= nextDiscard { discardParsed() }
          skipWhitespace()
          switch next() {
          case UInt8(ascii: ","):
            skipWhitespace()
            continue parsing
          case UInt8(ascii: "]"):
            let frame = frames.removeLast()
            value = .array(values.popArray(from: frame.valueStart))
            continue
          case nil: throw failure(.unexpectedEnd, "']' expected")
          default: throw failure(.syntax, "']' expected")
          }
        }
      }
      // Every container is closed: the value is the whole.
      return value
    }
  }

  /// A member's key and its colon; the key goes on the key stack.
  private mutating func parseKey() throws(JSONParseError) {
    guard peek() == UInt8(ascii: "\"") else { throw expected("string or '}'") }
    keys.append(try parseString())
    skipWhitespace()
    guard peek() == UInt8(ascii: ":") else { throw expected("':'") }
    offset += 1
    skipWhitespace()
  }

  /// Adds the innermost object's member whose key is the last on the key stack. A repeated key
  /// (the same bytes: Swift's `==` alone would also join "é" and "e\u{301}") keeps its first
  /// position and takes the last value, or `null` and a refusal unless duplicates are allowed.
  private mutating func add(member value: consuming JSON) {
    let frameIndex = frames.count - 1
    let keyStart = frames[frameIndex].keyStart
    let position = keys.count - 1
    if let earlier = Self.earlierPosition(
      ofKeyAt: position, in: keys, from: keyStart, index: frames[frameIndex].index)
    {
      if !allowDuplicateKeys {
        refuse(
          .duplicateKey,
          "duplicate object key \(JSON.string(keys[position]).description)\(place); "
            + "which value was meant is ambiguous")
        value = .null
      }
      values.replace(at: frames[frameIndex].valueStart + earlier, with: value)
      keys.removeLast()
      return
    }
    values.push(value)
    if position - keyStart == Self.scanLimit {
      var index: [String: Int] = [:]
      for key in keyStart...position { index[keys[key]] = index[keys[key]] ?? key - keyStart }
      frames[frameIndex].index = index
    } else if frames[frameIndex].index != nil {
      if frames[frameIndex].index?[keys[position]] == nil {
        frames[frameIndex].index?[keys[position]] = position - keyStart
      }
    }
  }

  /// Where, among the innermost object's earlier members (its keys from `keyStart` in `keys`,
  /// and its `index` once it has one), the key at `position` already is.
  ///
  /// Static, with what it reads passed in: as a method of the parser it was called on a copy
  /// of the whole parser (its 176 bytes copied for every member parsed), as a non-copyable
  /// value's non-mutating method called from a mutating one is.
  private static func earlierPosition(
    ofKeyAt position: Int, in keys: [String], from keyStart: Int, index: [String: Int]?
  ) -> Int? {
    let key = keys[position]
    if let index {
      guard let found = index[key] else { return nil }
      if keys[keyStart + found].utf8.elementsEqual(key.utf8) { return found }
      // Canonically equal but different bytes: only a scan can tell whether the same bytes
      // are there too.
    }
    // Read in the array's buffer: each key is compared where it lies, not copied out (a
    // retain and a release of its storage, calls even for a small string).
    return keys.withUnsafeBufferPointer { keys in
      let count = key.utf8.count
      for earlier in keyStart..<position where keys[earlier].utf8.count == count {
        if keys[earlier] == key && keys[earlier].utf8.elementsEqual(key.utf8) {
          return earlier - keyStart
        }
      }
      return nil
    }
  }

  private mutating func closeObject() -> JSONObject {
    let frame = frames.removeLast()
    let count = keys.count - frame.keyStart
    var object = JSONObject(reservingCapacity: count)
    values.moveMembers(from: frame.valueStart, keys: keys, keyStart: frame.keyStart, into: &object)
    keys.removeLast(count)
    object.reindex()
    return object
  }

  private mutating func literal(_ word: StaticString, _ value: JSON) throws(JSONParseError) -> JSON
  {
    let text = UnsafeRawBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
    for expected in text {
      guard let byte = next() else { throw failure(.unexpectedEnd, "unexpected end of input") }
      guard byte == expected else { throw failure(.syntax, "invalid token") }
    }
    return value
  }

  // MARK: Numbers

  private mutating func parseNumber() throws(JSONParseError) -> JSON {
    let numberStart = offset
    let negative = start[offset] == UInt8(ascii: "-")
    if negative { offset += 1 }
    guard let first = next(), isDigit(first) else { throw failure(.syntax, "invalid token") }
    if first == UInt8(ascii: "0"), let after = peek(), isDigit(after) {
      offset += 1
      throw failure(.syntax, "invalid token")
    }
    // Up to 18 digits cannot overflow an Int64, so they are summed as they are read.
    var magnitude = Int64(first &- UInt8(ascii: "0"))
    var digits = 1
    while offset < bytes.count, isDigit(start[offset]) {
      if digits < 18 { magnitude = magnitude &* 10 &+ Int64(start[offset] &- UInt8(ascii: "0")) }
      digits += 1
      offset += 1
    }
    var isInteger = true
    if peek() == UInt8(ascii: ".") {
      isInteger = false
      offset += 1
      guard let digit = next(), isDigit(digit) else { throw failure(.syntax, "invalid token") }
      skipDigits()
    }
    if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
      isInteger = false
      offset += 1
      if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { offset += 1 }
      guard let digit = next(), isDigit(digit) else { throw failure(.syntax, "invalid token") }
      skipDigits()
    }
    if isInteger && digits <= 18 { return .integer(negative ? -magnitude : magnitude) }
    let text = String(
      decoding: UnsafeRawBufferPointer(rebasing: bytes[numberStart..<offset]), as: UTF8.self)
    if isInteger {
      if let integer = Int64(text) { return .integer(integer) }
      refuse(
        .numberOutOfRange,
        "the integer \(text)\(place) does not fit in 64 bits "
          + "(from -9223372036854775808 to 9223372036854775807)")
      return .null
    }
    // The standard library's conversion rounds correctly; no shortcut here could promise that.
    if let double = Double(text), double.isFinite { return .double(double) }
    refuse(
      .numberOutOfRange,
      "the number \(text)\(place) is beyond the range of a double (about ±1.8e308)")
    return .null
  }

  private mutating func skipDigits() {
    while offset < bytes.count, isDigit(start[offset]) { offset += 1 }
  }

  @inline(__always)
  private func isDigit(_ byte: UInt8) -> Bool { byte &- UInt8(ascii: "0") < 10 }

  /// A byte no value starts with; the whole character counts as read, and is named.
  private mutating func invalidToken() -> JSONParseError {
    let tokenStart = offset
    offset += 1
    while offset < bytes.count, start[offset] & 0xC0 == 0x80 { offset += 1 }
    let token = UnsafeRawBufferPointer(rebasing: bytes[tokenStart..<offset])
    return failure(.syntax, "invalid token near '\(String(decoding: token, as: UTF8.self))'")
  }

  // MARK: Reading and reporting

  @inline(__always)
  private func peek() -> UInt8? { offset < bytes.count ? start[offset] : nil }

  @inline(__always)
  mutating func next() -> UInt8? {
    guard offset < bytes.count else { return nil }
    defer { offset += 1 }
    return start[offset]
  }

  @inline(__always)
  mutating func skipWhitespace() {
    while offset < bytes.count {
      let byte = start[offset]
      guard byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 else { return }
      offset += 1
    }
  }

  /// The pointer of the value being read, from the open containers: an array's next index, an
  /// object's last key. Built only for a refusal, which is rare.
  var pointer: JSONPointer {
    var tokens: [String] = []
    for (level, frame) in frames.enumerated() {
      let next = level + 1 < frames.count ? frames[level + 1] : nil
      if frame.isObject {
        tokens.append(keys[(next?.keyStart ?? keys.count) - 1])
      } else {
        tokens.append(String((next?.valueStart ?? values.count) - frame.valueStart))
      }
    }
    return JSONPointer(tokens: tokens)
  }

  /// " at /a/b", or nothing for the whole text.
  private var place: String { frames.isEmpty ? "" : " at \(pointer.description)" }

  private mutating func refuse(_ kind: JSONParseError.Kind, _ reason: String) {
    // Only the first refusal's place is reported; counted now, while its line is still here.
    let location = refusals.isEmpty && discardLimit != nil ? location(at: offset) : nil
    refusals.append(
      Refusal(
        member: JSONParseError.Refusal(kind: kind, pointer: pointer, reason: reason),
        position: offset, location: location))
  }

  /// The byte at the offset is not `what`: it counts as read, as the location rule says.
  private mutating func expected(_ what: String) -> JSONParseError {
    guard offset < bytes.count else { return failure(.unexpectedEnd, "\(what) expected") }
    offset += 1
    return failure(.syntax, "\(what) expected")
  }

  /// An error at the current offset.
  func failure(_ kind: JSONParseError.Kind, _ reason: String) -> JSONParseError {
    guard discardLimit != nil else {
      return JSONParseError(kind, reason, position: offset, in: bytes)
    }
    let (line, column) = location(at: offset)
    return JSONParseError(kind: kind, line: line, column: column, position: offset, reason: reason)
  }
}

/// Writes compact JSON text into a growable byte buffer of its own.
///
/// Measured faster than building a jansson tree and calling `json_dumpb` (see
/// `bench/json/run.sh`), and it writes doubles in their shortest round-trip form (`19.99`, where
/// jansson's `%.17g` gives `19.989999999999998`). Bytes go through a raw pointer with one
/// capacity check per token rather than `Array.append`'s checks per byte (about twice as fast).
///
/// The server's writer thread keeps one for all its output: lines are written into it value by
/// value, with their fixed parts as raw text, and handed to `write(2)` from it, with no buffer
/// allocated or copied per value.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.append(#"{"id":"#)
/// try writer.write(["price": 19.99])
/// writer.append(UInt8(ascii: "}"))
/// writer.withUnsafeBytes { Array($0) }  // the bytes of {"id":{"price":19.99}}
/// ```
public struct JSONWriter: ~Copyable {
  // `start` and `written` are usable from inlined code: appending a literal, inlined where it is
  // written, copies its bytes without a call (its length is a constant there).
  @usableFromInline var start: UnsafeMutablePointer<UInt8>
  @usableFromInline var written = 0
  /// How many bytes were written.
  public internal(set) var count: Int {
    get { written }
    set { written = newValue }
  }
  /// How many bytes fit before the buffer grows.
  public private(set) var capacity: Int
  /// `description` writes non-finite doubles as `nan`/`inf` instead of failing: it is for people.
  private let lenient: Bool
  /// Where the written bytes go once the buffer is full, while ``write(handingOnAt:to:_:)``
  /// runs; and from how many written bytes on they go there rather than the buffer growing.
  private var handOn: ((UnsafeRawBufferPointer) -> Void)? = nil
  private var handOnAt = Int.max
  /// How many bytes were handed on since the writer was made: with ``count``, a position in
  /// the whole text that never goes back, so a writer that must take back what it wrote since
  /// some point (``JSONTextEncoder``) can tell whether those bytes are still here.
  var handedOn = 0

  init(lenient: Bool, capacity: Int = 512) {
    self.lenient = lenient
    self.capacity = capacity
    start = .allocate(capacity: capacity)
  }

  /// A writer for the wire: a non-finite double is an error, as JSON has no spelling for it.
  public init(capacity: Int = 512) {
    self.init(lenient: false, capacity: max(capacity, 1))
  }

  deinit { start.deallocate() }

  /// The bytes written so far, valid only inside `body`.
  public func withUnsafeBytes<Result, Failure: Error>(
    _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    try body(UnsafeRawBufferPointer(start: start, count: count))
  }

  /// Forgets the bytes from offset `count` on (a line that could not be written whole); the
  /// capacity stays.
  public mutating func truncate(to count: Int) {
    precondition(count >= 0 && count <= self.count, "truncating past the written bytes")
    self.count = count
  }

  /// Writes a whole value; on failure nothing of it stays written.
  public mutating func write(_ value: JSON) throws(JSONWriteError) {
    let mark = count
    do throws(JSONWriteError) {
      try write(value, depth: 0)
    } catch {
      count = mark
      throw error
    }
  }

  /// Writes `elements` as a JSON array, each read where it lies (no copy of each element, as
  /// `write(.array(elements))` or a loop over them would make); on failure nothing of it stays
  /// written.
  public mutating func write(array elements: [JSON]) throws(JSONWriteError) {
    let mark = count
    do throws(JSONWriteError) {
      try write(elements: elements, depth: 0)
    } catch {
      count = mark
      throw error
    }
  }

  /// Writes `prefix` and then `value`, or nothing when `value` is `nil`: an optional member of
  /// a message (`,"cause":`), borrowed where it lies (unwrapped by its caller, it was copied,
  /// an atomic retain and release). On failure nothing of either stays written.
  public mutating func write(_ prefix: StaticString, ifPresent value: JSON?)
    throws(JSONWriteError)
  {
    switch value {
    case .none: return
    case .some(let value):
      let mark = count
      append(prefix)
      do throws(JSONWriteError) {
        try write(value, depth: 0)
      } catch {
        count = mark
        throw error
      }
    }
  }

  /// Writes `string` as a JSON string (quoted, escaped), without wrapping it in a ``JSON``.
  public mutating func write(string: String) {
    write(string)
  }

  /// Runs `body`, handing the bytes written so far to `handOn` whenever the buffer is full and
  /// holds at least `bytes` of them, instead of growing it: a value of any size is written
  /// with a buffer of about `bytes`, never its whole text (a `state/get` of a million-element
  /// state). What was handed on cannot be taken back, so `body` must not fail once it has
  /// begun writing: check a value with ``JSON/checkWritable()`` first. What is left in the
  /// buffer at the end stays there, for the caller to write out.
  public mutating func write<Failure: Error>(
    handingOnAt bytes: Int, to handOn: (UnsafeRawBufferPointer) -> Void,
    _ body: (inout JSONWriter) throws(Failure) -> Void
  ) throws(Failure) {
    try withoutActuallyEscaping(handOn) { (handOn) throws(Failure) in
      self.handOn = handOn
      handOnAt = max(bytes, 1)
      defer {
        self.handOn = nil
        handOnAt = Int.max
      }
      try body(&self)
    }
  }

  /// Appends what was written to `buffer`.
  func finish(appendingTo buffer: inout [UInt8]) {
    buffer.append(contentsOf: UnsafeBufferPointer(start: start, count: count))
  }

  /// Room for `extra` more bytes, so the puts that follow need no checks. The check is inlined
  /// into every token's writing (a call per token was a tenth of the writer thread's time); the
  /// growth is not.
  @inlinable @inline(__always)
  mutating func reserve(_ extra: Int) {
    if capacity &- written < extra { grow(extra) }
  }

  @usableFromInline @inline(never)
  mutating func grow(_ extra: Int) {
    if let handOn, written >= handOnAt {
      handOn(UnsafeRawBufferPointer(start: start, count: written))
      handedOn &+= written
      written = 0
      if capacity >= extra { return }
    }
    let grown = max(capacity * 2, count + extra)
    let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
    moved.update(from: start, count: count)
    start.deallocate()
    start = moved
    capacity = grown
  }

  /// One byte into reserved room.
  @inlinable @inline(__always)
  mutating func put(_ byte: UInt8) {
    start[written] = byte
    written &+= 1
  }

  @inlinable @inline(__always)
  mutating func put(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let base = bytes.baseAddress else { return }
    (start + written).update(from: base, count: bytes.count)
    written &+= bytes.count
  }

  /// Appends one byte as it is (a bracket, a comma, a newline).
  @inlinable @inline(__always)
  public mutating func append(_ byte: UInt8) {
    reserve(1)
    put(byte)
  }

  /// Appends bytes as they are: text written earlier (the part of a line a pipe could not take
  /// at once, written on by another writer).
  public mutating func append(contentsOf bytes: [UInt8]) {
    reserve(bytes.count)
    bytes.withUnsafeBufferPointer { put($0) }
  }

  /// Appends text as it is: the fixed parts of a message around its values. Inlined: the
  /// literal's length is then a constant, and its bytes are copied without a call.
  @inlinable @inline(__always)
  public mutating func append(_ literal: StaticString) {
    reserve(literal.utf8CodeUnitCount)
    put(UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
  }

  /// `depth` is the value's nesting level minus one: the root is at 0.
  mutating func write(_ value: JSON, depth: Int) throws(JSONWriteError) {
    try withUnsafePointer(to: value) { (value) throws(JSONWriteError) in
      try write(at: value, depth: depth)
    }
  }

  /// Writes the value `value` points to, reading it where it lies. Elements and members are
  /// passed on as pointers into their array or members buffer: passed as values, each was
  /// copied (a `swift_retain` and a `swift_release`, atomic, per element) though only read.
  /// The array or object holding them is kept alive by the value being written.
  private mutating func write(at value: UnsafePointer<JSON>, depth: Int) throws(JSONWriteError) {
    guard depth < JSON.maximumDepth else { throw Self.tooDeep }
    switch value.pointee {
    case .null: append("null")
    case .bool(let flag): flag ? append("true") : append("false")
    case .integer(let integer): write(integer: integer)
    case .double(let double): try write(double)
    case .string: write(stringAt: Self.text(ofBoxedString: value))
    case .array(let elements):
      try write(elements: elements, depth: depth)
    case .object(let object):
      append(UInt8(ascii: "{"))
      try object.withMembers { (members) throws(JSONWriteError) in
        guard let first = members.baseAddress else { return }
        for position in 0..<members.count {
          if position > 0 { append(UInt8(ascii: ",")) }
          let member = UnsafeRawPointer(first + position)
          write(stringAt: member.assumingMemoryBound(to: String.self))
          append(UInt8(ascii: ":"))
          do throws(JSONWriteError) {
            try write(
              at: (member + Self.valueOffset).assumingMemoryBound(to: JSON.self), depth: depth + 1)
          } catch {
            throw error.inside(members[position].key)
          }
        }
      }
      append(UInt8(ascii: "}"))
    }
  }

  /// `depth` is the array's own level, as in `write(at:depth:)`.
  private mutating func write(elements: [JSON], depth: Int) throws(JSONWriteError) {
    append(UInt8(ascii: "["))
    try elements.withUnsafeBufferPointer { (elements) throws(JSONWriteError) in
      guard let first = elements.baseAddress else { return }
      for position in 0..<elements.count {
        if position > 0 { append(UInt8(ascii: ",")) }
        do throws(JSONWriteError) {
          try write(at: first + position, depth: depth + 1)
        } catch {
          throw error.inside("\(position)")
        }
      }
    }
    append(UInt8(ascii: "]"))
  }

  /// The text of a `.string` value, read where it lies: bound as `case .string(let string)`,
  /// the text was retained and released (an atomic operation per string). The case's payload
  /// is the `String` itself, at the start of the value (checked in debug builds, where every
  /// test that writes a string checks it).
  @inline(__always)
  private static func text(ofBoxedString value: UnsafePointer<JSON>) -> UnsafePointer<String> {
    let text = UnsafeRawPointer(value).assumingMemoryBound(to: String.self)
    assert(value.pointee.stringValue == text.pointee, "the layout of a string value changed")
    return text
  }

  /// Where a member's value lies in it: right after its key, as a tuple is laid out like a
  /// struct (checked in debug builds).
  @inline(__always)
  private static var valueOffset: Int {
    assert(
      MemoryLayout<JSONObject.Member>.offset(of: \JSONObject.Member.value)
        == MemoryLayout<String>.stride)
    return MemoryLayout<String>.stride
  }

  static let tooDeep = JSONWriteError(
    kind: .tooDeep, pointer: "",
    reason: "values nest deeper than \(JSON.maximumDepth) levels; the text would not parse")

  private mutating func write(_ double: Double) throws(JSONWriteError) {
    guard double.isFinite || lenient else {
      throw JSONWriteError(
        kind: .nonFiniteDouble, pointer: "",
        reason: "\(double) is not a JSON number (only finite doubles can be written)")
    }
    // Swift's description is the shortest text that reads back as the same double, and its
    // forms ("19.99", "1e-05", "1.0", "-0.0", "5e-324") are all valid JSON numbers. It fits a
    // small string (no allocation) up to 15 characters.
    var text = double.description
    text.withUTF8 { utf8 in
      reserve(utf8.count)
      put(utf8)
    }
  }

  private mutating func write(_ string: borrowing String) {
    // Native and small strings lend their UTF-8 in place; only a bridged one is copied.
    let done: Void? = string.utf8.withContiguousStorageIfAvailable { utf8 in write(utf8: utf8) }
    if done == nil {
      var string = copy string
      string.withUTF8 { utf8 in write(utf8: utf8) }
    }
  }

  /// A member's key, read where it lies: passed as a value, it was retained and released.
  /// Not inlined: inlined into the loops above, the optimizer copied the key again.
  @inline(never)
  private mutating func write(stringAt string: UnsafePointer<String>) {
    let done: Void? = string.pointee.utf8.withContiguousStorageIfAvailable { utf8 in
      write(utf8: utf8)
    }
    if done == nil {
      var string = string.pointee
      string.withUTF8 { utf8 in write(utf8: utf8) }
    }
  }
}

extension JSON {
  /// Throws the error ``JSONWriter/write(_:)`` would throw for this value (a non-finite double,
  /// nesting past ``maximumDepth``), without writing anything: a value that passes can be
  /// written in pieces handed on as they are written (``JSONWriter/write(handingOnAt:to:_:)``).
  public func checkWritable() throws(JSONWriteError) {
    try withUnsafePointer(to: self) { (value) throws(JSONWriteError) in
      try Self.check(value, depth: 0)
    }
  }

  /// Mirrors ``JSONWriter``'s `write(at:depth:)`: the same depth rule, the same pointers.
  private static func check(_ value: UnsafePointer<JSON>, depth: Int) throws(JSONWriteError) {
    guard depth < maximumDepth else { throw JSONWriter.tooDeep }
    switch value.pointee {
    case .null, .bool, .integer, .string: return
    case .double(let double):
      guard double.isFinite else {
        throw JSONWriteError(
          kind: .nonFiniteDouble, pointer: "",
          reason: "\(double) is not a JSON number (only finite doubles can be written)")
      }
    case .array(let elements):
      try elements.withUnsafeBufferPointer { (elements) throws(JSONWriteError) in
        guard let first = elements.baseAddress else { return }
        for position in 0..<elements.count {
          do throws(JSONWriteError) {
            try check(first + position, depth: depth + 1)
          } catch {
            throw error.inside("\(position)")
          }
        }
      }
    case .object(let object):
      try object.withMembers { (members) throws(JSONWriteError) in
        for member in members {
          do throws(JSONWriteError) {
            try withUnsafePointer(to: member.value) { (value) throws(JSONWriteError) in
              try check(value, depth: depth + 1)
            }
          } catch {
            throw error.inside(member.key)
          }
        }
      }
    }
  }
}

extension JSONWriteError {
  /// The same error seen from the parent: `token` (an index or a key) is prepended to the
  /// pointer, escaped as RFC 6901 requires.
  fileprivate func inside(_ token: String) -> JSONWriteError {
    var escaped = ""
    for character in token.unicodeScalars {
      switch character {
      case "~": escaped += "~0"
      case "/": escaped += "~1"
      default: escaped.unicodeScalars.append(character)
      }
    }
    return JSONWriteError(kind: kind, pointer: "/" + escaped + pointer, reason: reason)
  }
}

extension JSON: CustomStringConvertible {
  /// Writes compact JSON text and returns its UTF-8 bytes: the form every outgoing message
  /// takes.
  ///
  /// ```swift
  /// let value: JSON = ["price": 19.99, "name": "Zoë"]
  /// try value.serialized()  // the bytes of {"price":19.99,"name":"Zoë"}
  /// ```
  public func serialized() throws(JSONWriteError) -> [UInt8] {
    var bytes: [UInt8] = []
    try write(to: &bytes)
    return bytes
  }

  /// Appends compact JSON text to `buffer` (the server's output buffer). On failure `buffer` is
  /// left as it was, never with half a value.
  public func write(to buffer: inout [UInt8]) throws(JSONWriteError) {
    var writer = JSONWriter()
    try writer.write(self, depth: 0)
    writer.finish(appendingTo: &buffer)
  }

  /// The compact JSON text; a non-finite double shows as `nan` or `inf` (so this is for
  /// people, never for the wire: use ``serialized()``).
  public var description: String {
    var writer = JSONWriter(lenient: true)
    do {
      try writer.write(self, depth: 0)
    } catch {
      return "<JSON nested deeper than \(JSON.maximumDepth)>"
    }
    var bytes: [UInt8] = []
    writer.finish(appendingTo: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }
}

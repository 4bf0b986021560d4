#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// Encodes an `Encodable` value straight to JSON text in a ``JSONWriter``, with no ``JSON``
/// tree in between: the bytes are exactly those `writer.write(JSONValueEncoder().encode(value))`
/// writes (same member order, `null` for an absent optional, dates, URLs, `Data` and `JSON`
/// values in their forms, doubles in their shortest text), at a fraction of the cost, as no
/// object buffer or string of the value is made and walked again.
///
/// Text is a stream, and `Codable` allows uses a stream cannot follow: a nested container
/// written to after its parent went on, the same key twice (the tree keeps its first position
/// and its last value), `superEncoder`, a single value encoded twice (the last wins), a
/// container asked for after a value. Such a value is written by the tree path instead
/// (`JSONValueEncoder`, then ``JSONWriter/write(_:)``): its text is the same, only slower. So
/// are values that nest deeper than ``JSON/maximumDepth`` and `JSON` values the writer refuses,
/// so that the error thrown is the tree path's own.
///
/// Errors are the tree path's: `EncodingError.invalidValue` for a non-finite double or a
/// `UInt64` above `Int64.max` (same coding path, same wording), ``JSONWriteError`` for what
/// the writer refuses, and whatever a value's `encode(to:)` throws. After a throw the writer
/// holds what it held before the call (its `count` is restored), except inside
/// ``JSONWriter/write(handingOnAt:to:_:)``, where bytes already handed on stay handed on (as
/// that method says, a body must not fail once it has begun writing).
///
/// ```swift
/// struct Item: Encodable { var id = "sku-7"; var quantity = 2 }
/// var writer = JSONWriter()
/// try JSONTextEncoder().encode(Item(), to: &writer)  // {"id":"sku-7","quantity":2}
/// ```
public struct JSONTextEncoder: Sendable {
  /// An encoder; it has no settings, so one can be shared freely.
  public init() {}

  /// Writes the JSON text of `value` at the end of `writer`.
  public func encode<T: Encodable>(_ value: T, to writer: inout JSONWriter) throws {
    try encode(value, userInfo: [:], to: &writer)
  }

  /// `encode(_:to:)` with `userInfo` for the value's `encode(to:)` to read, as
  /// `JSONValueEncoder.encode(_:userInfo:)` gives it.
  public func encode<T: Encodable>(
    _ value: T, userInfo: [CodingUserInfoKey: Any], to writer: inout JSONWriter
  ) throws {
    try withUnsafeMutablePointer(to: &writer) { writer in
      let session = TextEncoding(writer: writer, userInfo: userInfo)
      defer { session.end() }
      try session.encodeRoot(value, key: nil, in: TextFrame(session: session, parent: nil))
    }
  }

  /// Writes the text of each of `elements`, separated by commas, with no brackets: the inside
  /// of an array, for a caller that writes an array's elements a range at a time (or a range
  /// per thread) and its brackets itself. With `continuing` a comma comes first too (elements
  /// written before this call). Each element's text is `writer.write(JSONValueEncoder()
  /// .encode(element))`'s; a coding path in an error starts at the element's offset in
  /// `elements`, as it does when the elements are encoded as an array of their own.
  ///
  /// One encoder serves all the elements (its containers' state is kept from one to the next),
  /// so an element costs no allocation of the encoder's. On a throw the writer holds what it
  /// held before the call, as for `encode(_:to:)`.
  ///
  /// ```swift
  /// writer.append(UInt8(ascii: "["))
  /// try JSONTextEncoder().encode(elements: notes[0..<1024], to: &writer)
  /// try JSONTextEncoder().encode(elements: notes[1024...], continuing: true, to: &writer)
  /// writer.append(UInt8(ascii: "]"))
  /// ```
  public func encode<Elements: Sequence>(
    elements: Elements, continuing: Bool = false, userInfo: [CodingUserInfoKey: Any] = [:],
    to writer: inout JSONWriter
  ) throws where Elements.Element: Encodable {
    try withUnsafeMutablePointer(to: &writer) { writer in
      let session = TextEncoding(writer: writer, userInfo: userInfo)
      defer { session.end() }
      let root = TextFrame(session: session, parent: nil)
      let start = session.position
      var offset = 0
      do {
        for element in elements {
          if continuing || offset > 0 { writer.pointee.append(UInt8(ascii: ",")) }
          try session.encodeRoot(element, key: CodingPathKey(intValue: offset), in: root)
          offset += 1
        }
      } catch {
        _ = session.takeBack(to: start)
        throw error
      }
    }
  }
}

extension JSONTextEncoder {
  /// Writes elements one call each, keeping its encoder from one to the next: for a caller
  /// that reaches each element itself (an array's elements by index, a loop that writes the
  /// commas), where ``JSONTextEncoder/encode(elements:continuing:userInfo:to:)`` would need
  /// them as a sequence (a lazy map over the indices is a closure call and its generic
  /// iterator per element). One per thread: it is not `Sendable`.
  ///
  /// ```swift
  /// let elements = JSONTextEncoder.ElementEncoder()
  /// for index in range {
  ///   if index > range.lowerBound { writer.append(UInt8(ascii: ",")) }
  ///   try elements.encode(array[index], at: index - range.lowerBound, to: &writer)
  /// }
  /// ```
  public final class ElementEncoder {
    private let userInfo: [CodingUserInfoKey: Any]
    private var session: TextEncoding?
    private var root: TextFrame?

    /// `userInfo` is what each element's `encode(to:)` reads.
    public init(userInfo: [CodingUserInfoKey: Any] = [:]) {
      self.userInfo = userInfo
    }

    /// Writes `element`'s text, as ``JSONTextEncoder/encode(_:to:)`` does; a coding path in an
    /// error starts at `index` when one is given. On a throw the writer holds what it held
    /// before the call.
    public func encode<T: Encodable>(
      _ element: T, at index: Int? = nil, to writer: inout JSONWriter
    ) throws {
      try withUnsafeMutablePointer(to: &writer) { writer in
        let session: TextEncoding
        let root: TextFrame
        if let kept = self.session, let keptRoot = self.root {
          kept.writer = writer
          session = kept
          root = keptRoot
        } else {
          session = TextEncoding(writer: writer, userInfo: userInfo)
          root = TextFrame(session: session, parent: nil)
          self.session = session
          self.root = root
        }
        defer { session.end() }
        try session.encodeRoot(element, key: index.map { CodingPathKey(intValue: $0) }, in: root)
      }
    }
  }
}

/// One call of ``JSONTextEncoder``: the writer, and where the stream stands.
///
/// `top` is the innermost frame whose text is open, unretained: a frame is open only while it
/// is on the chain from the root (held by the call) through each open frame's `child` (held
/// by its parent), and a frame leaves that chain only when it is closed, at which point `top`
/// moves below it; `end()` clears it. Comparing it with a frame's address is the check every
/// write makes, so it costs no reference counting.
final class TextEncoding {
  /// Where the text goes: the writer of the current call (``JSONTextEncoder/ElementEncoder``
  /// serves several calls).
  @exclusivity(unchecked) var writer: UnsafeMutablePointer<JSONWriter>
  let userInfo: [CodingUserInfoKey: Any]
  @exclusivity(unchecked) var top: UnsafeMutableRawPointer?
  /// The text of the current value cannot be continued: a value failed, or was used in a way
  /// the stream cannot follow. Every write checks it (through `top`, which is cleared).
  @exclusivity(unchecked) var broken = false
  /// The current value was used in a way the stream cannot follow: its text comes from the
  /// tree path.
  @exclusivity(unchecked) var needsTree = false
  /// The tree path is writing the current value: a container of this encoder kept from
  /// before is not its own, and what is written to it is ignored, as the tree would.
  @exclusivity(unchecked) var byTree = false

  init(writer: UnsafeMutablePointer<JSONWriter>, userInfo: [CodingUserInfoKey: Any]) {
    self.writer = writer
    self.userInfo = userInfo
  }

  /// A position in the whole text, for taking back what was written since.
  var position: Int { writer.pointee.handedOn + writer.pointee.count }

  /// Forgets what was written since `mark`; false when part of it was already handed on.
  func takeBack(to mark: Int) -> Bool {
    let handedOn = writer.pointee.handedOn
    guard mark >= handedOn else {
      writer.pointee.truncate(to: 0)
      return false
    }
    writer.pointee.truncate(to: mark - handedOn)
    return true
  }

  /// After the call: a container kept past it finds the stream broken and writes nothing.
  func end() {
    top = nil
    broken = true
  }

  var topFrame: TextFrame? {
    top.map { Unmanaged<TextFrame>.fromOpaque($0).takeUnretainedValue() }
  }

  /// The stream cannot follow what the value does: it will be encoded by the tree path.
  /// Returns the error that unwinds the value's `encode(to:)`.
  func needTree() -> any Error {
    needsTree = true
    broken = true
    top = nil
    return TextEncodingFallback()
  }

  /// A value's `encode(to:)` failed: what it wrote is unknown, and if the failure is caught
  /// and the encoding goes on, the tree path must do it.
  func fail() {
    broken = true
    top = nil
  }

  /// Writes the text of a root value (or of an element of `encode(elements:)`, its `key` the
  /// element's offset) with `root`, or the tree path's text when the stream cannot follow.
  func encodeRoot<T: Encodable>(_ value: T, key: (any CodingKey)?, in root: TextFrame) throws {
    let mark = position
    broken = false
    needsTree = false
    root.open(key: key, nested: false)
    // Until the next value, a container kept past this one finds the stream broken.
    defer {
      top = nil
      broken = true
    }
    do {
      if try !writeSpecial(value, depth: 0) {
        try value.encode(to: root)
        try root.finish()
      }
    } catch {
      guard needsTree else {
        _ = takeBack(to: mark)
        throw error
      }
    }
    // A failure caught inside the value and gone past leaves text the tree would not have.
    if broken { try encodeByTree(value, key: key, from: mark) }
  }

  private func encodeByTree<T: Encodable>(
    _ value: T, key: (any CodingKey)?, from mark: Int
  ) throws {
    guard takeBack(to: mark) else {
      throw EncodingError.invalidValue(
        value,
        EncodingError.Context(
          codingPath: key.map { [$0] } ?? [],
          debugDescription:
            "this value must be encoded by JSONValueEncoder (it uses its containers in an order "
            + "text cannot follow), but part of its text was already handed on"))
    }
    byTree = true
    defer { byTree = false }
    let encoder = ValueEncoder(parent: nil, key: key)
    encoder.rootUserInfo = userInfo
    try writer.pointee.write(encoder.encodeValue(value))
  }

  /// Writes the types with a JSON form of their own rather than their `Encodable` one, as
  /// `ValueEncoder.special` encodes them; false for any other type.
  func writeSpecial<T: Encodable>(_ value: T, depth: Int) throws -> Bool {
    if T.self == JSON.self, let json = value as? JSON {
      try write(json, depth: depth)
      return true
    }
    if T.self == Date.self, let date = value as? Date {
      writer.pointee.write(date: date)
      return true
    }
    if T.self == URL.self, let url = value as? URL {
      writer.pointee.write(string: url.absoluteString)
      return true
    }
    if T.self == Data.self, let data = value as? Data {
      writer.pointee.write(string: data.base64EncodedString())
      return true
    }
    return false
  }

  /// A `JSON` value at `depth`; one the writer refuses (a non-finite double, too deep) is left
  /// to the tree path, whose error then names its place in the whole value.
  func write(_ json: JSON, depth: Int) throws {
    do throws(JSONWriteError) {
      try writer.pointee.write(json, depth: depth)
    } catch {
      throw needTree()
    }
  }
}

/// Unwinds a value's `encode(to:)` when the stream cannot follow it; never seen by callers.
struct TextEncodingFallback: Error {}

extension JSONWriter {
  /// `date` as the string `ISO8601Date.string(from:)` gives, written in place.
  mutating func write(date: Date) {
    reserve(26)
    let text = UnsafeMutableBufferPointer(start: start + written + 1, count: 24)
    guard ISO8601Date.write(date, into: text) else {
      write(string: ISO8601Date.string(from: date))
      return
    }
    start[written] = UInt8(ascii: "\"")
    start[written + 25] = UInt8(ascii: "\"")
    written += 26
  }

  /// A finite double, in the text ``write(_:)`` gives it.
  mutating func write(finite double: Double) {
    var text = double.description
    text.withUTF8 { utf8 in
      reserve(utf8.count)
      put(utf8)
    }
  }
}

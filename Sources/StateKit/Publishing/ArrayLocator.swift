import JSON

/// Finds the `IdentifiedArray` at one path of a view and encodes what is asked of it (all of
/// it, or one element), without encoding anything else: the view's `encode(to:)` runs against
/// this encoder, which follows only the members on the path and ignores every other value
/// unencoded. How a publisher that left an array's elements to the state (`ArrayElision`)
/// answers for them: `/notes/7/text` costs the encoding of note 7.
///
/// Only keyed and single-value containers are followed, which is all a view walk follows to
/// reach an array it marks (PatchWalk.swift).
final class ArrayLocator: Encoder {
  enum Request {
    case whole
    case element(Int)
    /// The array itself (`elementText(ofArrayAt:in:)`).
    case text
  }

  /// What the search is after, shared by the levels of one search.
  final class Search {
    let tokens: [String]
    let request: Request
    var found: JSON?
    /// The array itself, when `elementText` asked for it.
    var text: ElementText?

    init(tokens: [String], request: Request) {
      self.tokens = tokens
      self.request = request
    }
  }

  let search: Search
  /// How many of the path's tokens lead here.
  let depth: Int
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  private init(search: Search, depth: Int) {
    self.search = search
    self.depth = depth
  }

  /// What `request` asks of the array at `path` in `view`; nil when no array is there (or the
  /// element is not).
  static func encode<View: Encodable>(
    _ request: Request, ofArrayAt path: JSONPointer, in view: View
  ) throws -> JSON? {
    let search = Search(tokens: path.tokens, request: request)
    try view.encode(to: ArrayLocator(search: search, depth: 0))
    return search.found
  }

  /// The array at `path` in `view`, to be written a run at a time (by two threads: see
  /// `ElementPipeline`); nil when no array is there. The view is walked once, not once per run.
  static func elementText<View: Encodable>(
    ofArrayAt path: JSONPointer, in view: View
  ) throws -> ElementText? {
    let search = Search(tokens: path.tokens, request: .text)
    try view.encode(to: ArrayLocator(search: search, depth: 0))
    return search.text
  }

  /// Called by the `IdentifiedArray` that met this encoder.
  func found<Element: Encodable>(_ array: IdentifiedArray<Element>) throws {
    guard depth == search.tokens.count, search.found == nil, search.text == nil else { return }
    switch search.request {
    case .text:
      search.text = ElementText(array)
    case .whole:
      search.found = try JSONValueEncoder().encode(array)
    case .element(let index):
      guard index >= 0, index < array.count else { return }
      search.found = try JSONValueEncoder().encode(array[index])
    }
  }

  /// The locator one level down, when `key` is the path's next token.
  fileprivate func child(_ key: String) -> ArrayLocator? {
    guard depth < search.tokens.count, search.tokens[depth] == key else { return nil }
    return ArrayLocator(search: search, depth: depth + 1)
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(LocatingKeyedContainer<Key>(locator: self))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer { DiscardingContainer() }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    LocatingSingleValueContainer(locator: self)
  }
}

private struct LocatingKeyedContainer<Key: CodingKey>: NullWritingKeyedContainer {
  let locator: ArrayLocator
  var codingPath: [any CodingKey] { [] }

  mutating func encodeNil(forKey key: Key) throws {}
  mutating func encode(_ value: Bool, forKey key: Key) throws {}
  mutating func encode(_ value: String, forKey key: Key) throws {}
  mutating func encode(_ value: Double, forKey key: Key) throws {}
  mutating func encode(_ value: Float, forKey key: Key) throws {}
  mutating func encode(_ value: Int, forKey key: Key) throws {}
  mutating func encode(_ value: Int8, forKey key: Key) throws {}
  mutating func encode(_ value: Int16, forKey key: Key) throws {}
  mutating func encode(_ value: Int32, forKey key: Key) throws {}
  mutating func encode(_ value: Int64, forKey key: Key) throws {}
  mutating func encode(_ value: UInt, forKey key: Key) throws {}
  mutating func encode(_ value: UInt8, forKey key: Key) throws {}
  mutating func encode(_ value: UInt16, forKey key: Key) throws {}
  mutating func encode(_ value: UInt32, forKey key: Key) throws {}
  mutating func encode(_ value: UInt64, forKey key: Key) throws {}

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    guard let child = locator.child(key.stringValue) else { return }
    try value.encode(to: child)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    guard let child = locator.child(key.stringValue) else {
      return KeyedEncodingContainer(DiscardingKeyedContainer<NestedKey>())
    }
    return KeyedEncodingContainer(LocatingKeyedContainer<NestedKey>(locator: child))
  }

  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    DiscardingContainer()
  }

  mutating func superEncoder() -> any Encoder { DiscardingEncoder() }
  mutating func superEncoder(forKey key: Key) -> any Encoder { DiscardingEncoder() }
}

private struct LocatingSingleValueContainer: SingleValueEncodingContainer {
  let locator: ArrayLocator
  var codingPath: [any CodingKey] { [] }

  mutating func encodeNil() throws {}
  mutating func encode(_ value: Bool) throws {}
  mutating func encode(_ value: String) throws {}
  mutating func encode(_ value: Double) throws {}
  mutating func encode(_ value: Float) throws {}
  mutating func encode(_ value: Int) throws {}
  mutating func encode(_ value: Int8) throws {}
  mutating func encode(_ value: Int16) throws {}
  mutating func encode(_ value: Int32) throws {}
  mutating func encode(_ value: Int64) throws {}
  mutating func encode(_ value: UInt) throws {}
  mutating func encode(_ value: UInt8) throws {}
  mutating func encode(_ value: UInt16) throws {}
  mutating func encode(_ value: UInt32) throws {}
  mutating func encode(_ value: UInt64) throws {}
  /// The value stands at the same path (a wrapper's inner value).
  mutating func encode<T: Encodable>(_ value: T) throws { try value.encode(to: locator) }
}

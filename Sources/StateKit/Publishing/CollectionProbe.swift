import JSON

/// The encoder a `PatchWalk` hands a value that has no object to be walked against (an array,
/// a new member): an `IdentifiedArray` recognises it and publishes itself incrementally
/// (`publishIfWalked(by:)`); any other value is stopped at its first container and the walk
/// encodes it whole. This replaces asking each value's type whether it is an `IdentifiedArray`,
/// whose first answer per type scans every protocol conformance in the binary.
///
/// A class: an `any Encoder` holding it needs no box, and the cast back is a pointer check.
final class CollectionProbe: Encoder {
  let walk: PatchWalk
  let path: JSONPointer
  let old: JSON?
  /// Set by an `IdentifiedArray` that published itself.
  var published = false
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  private init(walk: PatchWalk, path: JSONPointer, old: JSON?) {
    self.walk = walk
    self.path = path
    self.old = old
  }

  /// Offers `value` the probe; `true` when it published itself into `walk`.
  static func publish<T: Encodable>(
    _ value: T, into walk: PatchWalk, at path: JSONPointer, old: JSON?
  ) throws -> Bool {
    let probe = CollectionProbe(walk: walk, path: path, old: old)
    do {
      try value.encode(to: probe)
    } catch {
      // Its own error once published; otherwise the stop, or an error that encoding the value
      // whole meets again and reports.
      if probe.published { throw error }
    }
    return probe.published
  }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(StoppingKeyedContainer<Key>())
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer { StoppingContainer() }

  func singleValueContainer() -> any SingleValueEncodingContainer { StoppingContainer() }
}

/// Thrown at a value's first write into the probe: it is not an `IdentifiedArray`, and going
/// on would walk all of it (every element of a plain array) for nothing.
private struct NotACollection: Error {}

private struct StoppingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
  var codingPath: [any CodingKey] { [] }
  mutating func encodeNil(forKey key: Key) throws { throw NotACollection() }
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    throw NotACollection()
  }
  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    KeyedEncodingContainer(StoppingKeyedContainer<NestedKey>())
  }
  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    StoppingContainer()
  }
  mutating func superEncoder() -> any Encoder { StoppingEncoder() }
  mutating func superEncoder(forKey key: Key) -> any Encoder { StoppingEncoder() }
}

private struct StoppingContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
  var codingPath: [any CodingKey] { [] }
  var count: Int { 0 }
  mutating func encodeNil() throws { throw NotACollection() }
  mutating func encode<T: Encodable>(_ value: T) throws { throw NotACollection() }
  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type)
    -> KeyedEncodingContainer<NestedKey>
  {
    KeyedEncodingContainer(StoppingKeyedContainer<NestedKey>())
  }
  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { StoppingContainer() }
  mutating func superEncoder() -> any Encoder { StoppingEncoder() }
}

private struct StoppingEncoder: Encoder {
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }
  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(StoppingKeyedContainer<Key>())
  }
  func unkeyedContainer() -> any UnkeyedEncodingContainer { StoppingContainer() }
  func singleValueContainer() -> any SingleValueEncodingContainer { StoppingContainer() }
}

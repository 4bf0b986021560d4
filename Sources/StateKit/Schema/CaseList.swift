/// The wire names of an enum's cases, read from its type: the names that its synthesized
/// `init(from:)` accepts, in the order they are declared.
///
/// Synthesized decoding asks its decoder for a keyed container of the enum's `CodingKeys`, an
/// enum without payloads. Such an enum is one byte (up to 256 cases) whose values are its cases
/// in declaration order, and the first byte past the last case is `Optional`'s `nil` (Swift's
/// type layout: a payload-free enum's unused values are its extra inhabitants, and `Optional`
/// takes the first for `nil`). Reading the bytes 0, 1, 2... as `Key?` up to the first `nil`
/// therefore yields every key, each a valid value whose `stringValue` is its wire name.
enum CaseList {
  /// The names, or `nil` when the type's decoding does not start with a keyed container of a
  /// one-byte key type (hand-written coding, or more than 255 cases). A type whose decoding asks for no container at
  /// all (`Never`) has no case.
  static func names<T: Decodable>(of type: T.Type) -> [String]? {
    let decoder = CaseListingDecoder()
    _ = try? T(from: decoder)
    guard decoder.askedForContainer else { return [] }
    return decoder.names
  }

  /// The wire names of `Key`'s cases when its layout is that of a payload-free enum, else
  /// `nil`. Read into `[String]` directly: an array of `Key` and a key path to `stringValue`
  /// would instantiate generic metadata per key type, most of what start-up paid here.
  static func keyNames<Key: CodingKey>(of type: Key.Type) -> [String]? {
    switch MemoryLayout<Key?>.size {
    case 0:
      return []  // an enum without cases: `Key?` is always `nil`
    case 1:
      var names: [String] = []
      for byte in UInt8.min...UInt8.max {
        guard let key = unsafeBitCast(byte, to: Key?.self) else { return names }
        names.append(key.stringValue)
      }
      return names
    default:
      return nil
    }
  }
}

/// A decoder that records the keys of the first keyed container asked of it, then stops the
/// decoding (throws): nothing is read.
private final class CaseListingDecoder: Decoder {
  private(set) var askedForContainer = false
  private(set) var names: [String]?
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  struct Stop: Error {}

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    askedForContainer = true
    names = CaseList.keyNames(of: Key.self)
    throw Stop()
  }

  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    askedForContainer = true
    throw Stop()
  }

  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    askedForContainer = true
    throw Stop()
  }
}

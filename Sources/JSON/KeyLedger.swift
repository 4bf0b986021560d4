/// Which members of each object a strict decode asked for, so the others can be refused
/// (``JSONValueDecoder/refusesUnknownKeys``): a field a type does not read is a field the
/// sender believes has an effect, and it has none.
///
/// A `Decodable` type only ever asks for the keys it knows (synthesized code through its
/// `CodingKeys`; `Dictionary` through `allKeys`, which counts as asking for every key), so a
/// member nobody asked for when the whole value has decoded is unknown to the type.
final class KeyLedger {
  /// One object read through a keyed container.
  final class Entry {
    let object: JSONObject
    let decoder: ValueDecoder
    var asked: Set<String> = []
    var askedForAll = false

    init(object: JSONObject, decoder: ValueDecoder) {
      self.object = object
      self.decoder = decoder
    }

    func ask(_ key: String) { asked.insert(key) }
  }

  private var entries: [Entry] = []

  func track(_ object: JSONObject, decoder: ValueDecoder) -> Entry {
    let entry = Entry(object: object, decoder: decoder)
    entries.append(entry)
    return entry
  }

  /// The first member nobody asked for, in decoding order then member order. Ends the ledger:
  /// its entries hold their decoders, which hold the ledger, and that cycle is broken here
  /// (the soak found it leaking every strictly decoded action).
  func finish() -> JSONDecodingError? {
    defer { entries.removeAll() }
    for entry in entries where !entry.askedForAll {
      for key in entry.object.keys where !entry.asked.contains(key) {
        let known = entry.asked.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
        return entry.decoder.failure(
          at: CodingPathKey(stringValue: key),
          "unknown field \"\(key)\"; "
            + (known.isEmpty ? "no field is expected here" : "the fields here are \(known)"))
      }
    }
    return nil
  }
}

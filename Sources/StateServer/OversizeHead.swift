import JSON

/// The id of a request whose line is too long to read, found in the line's first bytes, so that
/// its refusal is answered to the request that sent it (a client waiting on that id hears at
/// once, where an answer with a `null` id leaves it waiting for ever).
///
/// Clients write the envelope first (`{"jsonrpc":"2.0","id":7,"method":"store/open","params":…`),
/// so the id is read from the members before the first value that is not a plain scalar; a
/// head that reaches anything else first (the params, an escape, the end of the bytes read)
/// gives no id, and the refusal keeps JSON-RPC's `null`.
enum OversizeHead {
  /// How much of a line's start is looked at: far more than any envelope's members take.
  static let length = 4096

  /// The top-level `id` among the first plain members of `head`, or `nil`.
  static func id(in head: UnsafeRawBufferPointer) -> JSON? {
    guard var scanner = EnvelopeScanner(head) else { return nil }
    let strings = JSONStringCache.current
    scanner.skipSpace()
    guard scanner.take(.openBrace) else { return nil }
    repeat {
      scanner.skipSpace()
      guard let key = scanner.plainString() else { return nil }
      scanner.skipSpace()
      guard scanner.take(.colon) else { return nil }
      scanner.skipSpace()
      // Every plain member before the id is a string (`jsonrpc`, `method`) or reads as one.
      guard let value = scanner.id(strings) else { return nil }
      scanner.skipSpace()
      // Followed by a separator, not by a fraction, an exponent or a 19th digit.
      guard scanner.at < scanner.count,
        [UInt8.comma, .closeBrace].contains(scanner.base[scanner.at])
      else { return nil }
      if EnvelopeScanner.equal(key, "id") { return value }
    } while scanner.take(.comma)
    return nil
  }
}

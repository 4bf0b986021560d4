import JSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A plain request as its line's framing was read in place: only the values inside it that a
/// client composes (an action, any object or array) are parsed, by jansson.
///
/// A pipelined increment is 108 bytes, of which jansson parses the 20 of its action,
/// `{"type":"increment"}`: jansson lexes every byte through a function call and copies every
/// string byte by byte, so the framing around the action was most of the parse. What is read
/// here is deliberately narrow: the members `jsonrpc` (which must be `"2.0"`), `method`, and
/// optionally `id` and `params`, in any order, each once; `method` a string of ASCII without
/// escapes or control bytes; an `id` that is such a string, `null` or an integer of at most 18
/// digits; `params` an object of at most eight members with plain keys whose values are such
/// strings (a `dispatch`'s `store` and `wait`) or objects and arrays, each parsed by jansson,
/// or else an object or array jansson parses whole; JSON whitespace between tokens. Any other
/// line is parsed whole by ``JSON/init(parsing:options:)``, which also reports every error, and
/// its envelope is checked by the connection. So a request read here is exactly what the
/// whole parse gives, params' members in the same order: `RequestEnvelopeTests` compares the
/// two on every truncation, deletion and one-byte change of a set of requests,
/// `LeadingStructureTests` jansson's part on JSONTestSuite.
///
/// A struct rather than the request's `JSONObject`: no object to allocate, fill and free, and
/// no members to look up by name to serve it.
struct RequestEnvelope: Sendable {
  /// nil for a notification (no `id` member), `.null` for `"id":null`.
  let id: JSON?
  let method: String
  let params: JSON?

  /// The request `line` holds, or `nil` when it is not a plain request (see above).
  init?(reading line: UnsafeRawBufferPointer) {
    guard var scanner = EnvelopeScanner(line), let (id, method, params) = scanner.request()
    else { return nil }
    (self.id, self.method, self.params) = (id, method, params)
  }
}

/// The request's members, read in place (see `RequestEnvelope`).
extension EnvelopeScanner {
  /// The members read; each is a bit of `seen`.
  private enum Member: UInt8 {
    case jsonrpc = 1, id = 2, method = 4, params = 8
  }

  fileprivate mutating func request() -> (id: JSON?, method: String, params: JSON?)? {
    skipSpace()
    guard take(.openBrace) else { return nil }
    let strings = JSONStringCache.current
    var id: JSON?
    var method: String?
    var params: JSON?
    var seen: UInt8 = 0
    repeat {
      skipSpace()
      guard let key = plainString(), let member = member(key), seen & member.rawValue == 0
      else { return nil }
      seen |= member.rawValue
      skipSpace()
      guard take(.colon) else { return nil }
      skipSpace()
      switch member {
      case .jsonrpc:
        guard let version = plainString(), Self.equal(version, "2.0") else { return nil }
      case .method:
        guard let text = plainString() else { return nil }
        method = strings.string(text)
      case .id:
        guard let value = self.id(strings) else { return nil }
        id = value
      case .params:
        guard let value = self.params(strings) else { return nil }
        params = value
      }
      skipSpace()
    } while take(.comma)
    guard take(.closeBrace), seen & Member.jsonrpc.rawValue != 0, let method else { return nil }
    skipSpace()
    return at == count ? (id, method, params) : nil
  }

  /// The params: an object's members are read here while each value is a plain string or
  /// an object or array (which jansson parses); any other object, and an array, is jansson's
  /// whole. The plain strings are where a `dispatch` names its store (`"store":"cart"`) and
  /// its `"wait"`; the action, the value a feature defines, is always jansson's.
  private mutating func params(_ strings: JSONStringCache) -> JSON? {
    let start = at
    if let object = paramsObject(strings) { return object }
    at = start
    return structure(levelsAbove: 1)
  }

  /// An object of at most `JSONObject.linearLimit` members (so it needs no key index) whose
  /// keys are plain and whose values are plain strings or structures; `nil` for any other.
  private mutating func paramsObject(_ strings: JSONStringCache) -> JSON? {
    guard take(.openBrace) else { return nil }
    var object = JSONObject(reservingCapacity: 4)
    skipSpace()
    if take(.closeBrace) { return .object(object) }
    repeat {
      skipSpace()
      guard object.count < JSONObject.linearLimit, let keyBytes = plainString() else {
        return nil
      }
      // A repeated key is refused by the whole parse, which says where (plain ASCII keys are
      // equal exactly when their bytes are).
      let key = strings.string(keyBytes)
      guard object.position(of: key) == nil else { return nil }
      skipSpace()
      guard take(.colon) else { return nil }
      skipSpace()
      guard at < count else { return nil }
      switch base[at] {
      case .quote:
        guard let text = plainString() else { return nil }
        object.appendUnindexed(key, strings.value(text))
      case .openBrace, .openBracket:
        guard let value = structure(levelsAbove: 2) else { return nil }
        object.appendUnindexed(key, value)
      default:
        return nil
      }
      skipSpace()
    } while take(.comma)
    return take(.closeBrace) ? .object(object) : nil
  }

  /// The object or array here, parsed by jansson.
  private mutating func structure(levelsAbove: Int) -> JSON? {
    let rest = UnsafeRawBufferPointer(start: base + at, count: count - at)
    guard let (value, taken) = JSON.parsingLeadingStructure(rest, levelsAbove: levelsAbove)
    else { return nil }
    at += taken
    return value
  }

  /// The member a key names; `nil` for any other key.
  private func member(_ key: UnsafeRawBufferPointer) -> Member? {
    switch key.count {
    case 2: return Self.equal(key, "id") ? .id : nil
    case 6: return Self.equal(key, "method") ? .method : Self.equal(key, "params") ? .params : nil
    case 7: return Self.equal(key, "jsonrpc") ? .jsonrpc : nil
    default: return nil
    }
  }
}

import JSON

/// One input line as the reader stage hands it on: already parsed, with a plain request's
/// framing read in place (``RequestEnvelope``).
enum InboundLine: Sendable {
  /// A plain request whose framing ``RequestEnvelope`` read: valid as an envelope already.
  case request(RequestEnvelope)
  /// A plain `store/open` whose large arrays were left as text, read as the store decodes its
  /// state (``DeferredArrays``). Boxed, as a malformed line is: it is rare.
  indirect case openFromText(RequestEnvelope, DeferredArrays)
  /// Any other message, parsed whole.
  case message(JSON)
  /// Boxed: the error is ten words, a line is 41 bytes without it (a request's id, method and
  /// params), and lines move through arrays by the thousand (a malformed line is rare).
  indirect case malformed(JSONParseError)
  /// A line longer than `--max-message-bytes`, skipped unread; `bytes` is its length, `id` the
  /// request id its first bytes name (``OversizeHead``).
  case oversize(bytes: Int, id: JSON?)
  /// The input ended (or the server stopped reading): shut down once the lines before are served.
  case endOfInput
}

extension InboundLine {
  /// A plain `store/open` request: the one line whose parsed params can be a whole large state.
  var isStoreOpen: Bool {
    // The length first: every other method's line, a `dispatch` above all, is told apart
    // without comparing strings.
    switch self {
    case .request(let request):
      return request.method.utf8.count == 10 && request.method == "store/open"
    case .openFromText: return true
    default: return false
    }
  }
}

import JSON

extension RequestEnvelope {
  /// The message (a line parsed whole) as a request, when its envelope is one the connection
  /// serves as it stands (the checks of `Router.serve(request:)`, which would accept it): `jsonrpc`
  /// `"2.0"`, a string `method`, an `id` that is a string, a number or null (or none), `params`
  /// an object or an array (or none). Members beyond these are ignored there too. Anything
  /// else stays a message, which the connection then checks and refuses with its own words.
  ///
  /// For a line too long to read in place (``LineFramer``): it is parsed whole, giving its
  /// bytes back as it goes, and served as a request, so a `store/open`'s params are passed
  /// down owned as every plain request's are. `message` is consumed: the params are moved out
  /// of it, not shared with it.
  static func line(parsed message: consuming JSON) -> InboundLine {
    guard case .object(var object) = message, object.hasString("2.0", forKey: "jsonrpc"),
      let method = object.string(forKey: "method"), isPlain(id: object["id"]),
      isPlain(params: object["params"])
    else { return .message(message) }
    // Given up first, so that the object is the parsed tree's only holder and its params
    // move out of it without a copy.
    message = .null
    let id = object["id"]
    let params = object.removeValue(forKey: "params")
    return .request(RequestEnvelope(id: id, method: method, params: params))
  }

  private static func isPlain(id: JSON?) -> Bool {
    switch id {
    case nil, .string?, .integer?, .double?, .null?: true
    default: false
    }
  }

  private static func isPlain(params: JSON?) -> Bool {
    switch params {
    case nil, .object?, .array?: true
    default: false
    }
  }

  private init(id: JSON?, method: String, params: consuming JSON?) {
    self.id = id
    self.method = method
    self.params = params
  }
}

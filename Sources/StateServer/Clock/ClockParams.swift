import JSON

/// `clock/advance`: how far to move the virtual clock.
struct AdvanceParams: Decodable {
  /// Milliseconds, 0 or more.
  var ms: Int64
}

/// `initialize`'s `clock`: which clock the server's effects sleep on.
enum ClockChoice: String, CaseIterable, ParamChoice {
  case real
  case virtual
}

extension OpenRPC {
  /// What `clock/now` and `clock/advance` answer.
  static let clockReading: JSON = [
    "type": "object",
    "properties": [
      "clock": ["enum": ["real", "virtual"]], "now": ["type": "integer", "minimum": 0],
    ],
  ]
}

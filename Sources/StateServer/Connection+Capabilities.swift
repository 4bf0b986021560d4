import JSON

/// `initialize`'s `capabilities`: what the client speaks. Every member is optional; one left
/// out keeps the behaviour a client that never heard of it gets.
struct ClientCapabilities: Decodable {
  /// Whether the client reads `$/progress` notifications (default false: none are sent).
  var progress: Bool?
  /// Whether the client reads a batch's responses as one array (default true); without it a
  /// batch it sends is answered element by element, one line each.
  var batch: Bool?
  /// Whether the client can drive a virtual clock with `clock/advance` (default true).
  var clock: Bool?
}

/// What both sides speak, as `initialize` answers it in `capabilities`.
struct AgreedCapabilities {
  var progress: Bool
  var batch: Bool
}

extension Connection {
  /// What the server and the client both speak. A client that cannot drive the clock cannot
  /// use a virtual one: every timer of its effects would wait forever, so that is refused
  /// here rather than left to hang.
  func agree(on capabilities: ClientCapabilities?, clock choice: ClockChoice?)
    throws(RPCError) -> AgreedCapabilities
  {
    if capabilities?.clock == false {
      if choice == .virtual {
        throw .invalidParams(
          pointer: "/clock",
          reason: "a virtual clock moves only with clock/advance, and capabilities.clock says "
            + "this client does not send it; leave clock out or say capabilities.clock: true")
      }
      if options.clock.mode == .virtual {
        throw .invalidParams(
          pointer: "/capabilities/clock",
          reason: "this server's clock is virtual (--clock virtual) and moves only with "
            + "clock/advance, which this client says it does not send")
      }
    }
    return AgreedCapabilities(
      progress: capabilities?.progress ?? false, batch: capabilities?.batch ?? true)
  }

  /// Serves this client as agreed from now on (a repeated `initialize` chooses anew).
  func adopt(_ speaks: AgreedCapabilities) {
    progress.enabled = speaks.progress
    progress.readsBatches = speaks.batch
  }
}

extension OpenRPC {
  /// `initialize`'s `capabilities` param.
  static let clientCapabilities: JSON = [
    "type": "object",
    "properties": [
      "progress": ["type": "boolean"], "batch": ["type": "boolean"], "clock": ["type": "boolean"],
    ],
  ]

  /// A `$/progress` notification's params.
  static let progressParams: JSON = [
    "type": "object", "required": ["token", "value"],
    "properties": [
      "token": ["type": ["string", "integer"]],
      "value": [
        "type": "object", "required": ["kind", "done"],
        "properties": [
          "kind": ["enum": ["begin", "report", "end"]], "done": ["type": "integer"],
          "total": ["type": "integer"], "message": ["type": "string"],
          "cancelled": ["type": "boolean"],
        ],
      ],
    ],
  ]
}

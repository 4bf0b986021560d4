import JSON

/// One line the server owes the client, in the order it was produced. Built on the main actor,
/// serialized by the writer thread (so encoding runs in parallel with reducing).
enum Outgoing: Sendable {
  /// A notification or a batch's responses, never merged or dropped. Patches of the stores in
  /// `barriers` may not be merged across it: events, `store/closed`, and responses that carry
  /// a state (a client sets its mirror from them and expects the patches that follow).
  case message(JSON, barriers: [String])
  /// A successful response; the envelope is written by the writer thread.
  case response(id: JSON, result: JSON, barriers: [String])
  /// The response to a `dispatch`, `{store, version}`: the hot path, built without objects.
  case dispatched(id: JSON, store: String, version: UInt64)
  case failure(id: JSON, error: RPCError)
  /// A `state/patch` notification, which may absorb later patches of the same subscription
  /// while the writer is blocked.
  case patch(PatchNotice)

  /// The stores whose patches may not be merged across this line.
  var barriers: [String] {
    switch self {
    case .message(_, let barriers), .response(_, _, let barriers): barriers
    case .dispatched, .failure, .patch: []
    }
  }

  /// The line as a JSON value (for a batch, whose responses are written as one array).
  var json: JSON {
    switch self {
    case .message(let message, _): message
    case .response(let id, let result, _): ["jsonrpc": "2.0", "id": id, "result": result]
    case .dispatched(let id, let store, let version):
      [
        "jsonrpc": "2.0", "id": id,
        "result": ["store": .string(store), "version": .integer(Int64(version))],
      ]
    case .failure(let id, let error): ["jsonrpc": "2.0", "id": id, "error": error.json]
    case .patch(let notice): notice.json
    }
  }

  /// The response's id, for a line that is one (a failed encoding still owes an answer).
  var responseID: JSON? {
    switch self {
    case .response(let id, _, _), .dispatched(let id, _, _), .failure(let id, _): id
    case .message(let message, _): message["id"]
    case .patch: nil
    }
  }

  /// Appends the line's bytes and its newline; on failure `bytes` is left as it was.
  func write(to bytes: inout [UInt8]) throws(JSONWriteError) {
    let start = bytes.count
    do throws(JSONWriteError) {
      switch self {
      case .message(let message, _):
        try message.write(to: &bytes)
      case .response(let id, let result, _):
        bytes.append(contentsOf: Self.idPrefix)
        try id.write(to: &bytes)
        bytes.append(contentsOf: #","result":"#.utf8)
        try result.write(to: &bytes)
        bytes.append(UInt8(ascii: "}"))
      case .dispatched(let id, let store, let version):
        bytes.append(contentsOf: Self.idPrefix)
        try id.write(to: &bytes)
        bytes.append(contentsOf: Self.dispatchedStore)
        try JSON.string(store).write(to: &bytes)
        bytes.append(contentsOf: Self.dispatchedVersion)
        appendDecimal(version, to: &bytes)
        bytes.append(contentsOf: Self.twoBraces)
      case .failure(let id, let error):
        bytes.append(contentsOf: Self.idPrefix)
        try id.write(to: &bytes)
        bytes.append(contentsOf: #","error":"#.utf8)
        try error.json.write(to: &bytes)
        bytes.append(UInt8(ascii: "}"))
      case .patch(let notice):
        try notice.write(to: &bytes)
      }
    } catch {
      bytes.removeSubrange(start...)
      throw error
    }
    bytes.append(0x0A)
  }

  // The fixed parts of the hot lines as bytes, made once: appending a string's UTF-8 view
  // cost about 160 instructions a piece (callgrind), a byte array's a copy.
  private static let idPrefix = Array(#"{"jsonrpc":"2.0","id":"#.utf8)
  private static let dispatchedStore = Array(#","result":{"store":"#.utf8)
  private static let dispatchedVersion = Array(#","version":"#.utf8)
  fileprivate static let twoBraces = Array("}}".utf8)
}

/// Appends the decimal digits of `value`, without the `String` that `String(value).utf8`
/// allocates.
func appendDecimal(_ value: UInt64, to bytes: inout [UInt8]) {
  // Most significant digit first: reversing the digits in place copied the array's slice.
  var divisor: UInt64 = 1
  while value / divisor >= 10 { divisor *= 10 }
  var rest = value
  while true {
    bytes.append(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest / divisor))
    rest %= divisor
    if divisor == 1 { return }
    divisor /= 10
  }
}

/// The params of a `state/patch` notification for one subscription.
struct PatchNotice: Sendable {
  var store: String
  /// The subscription's path, `""` for the whole state. Paths in `operations` are always from
  /// the store's root.
  var path: String
  var from: UInt64
  var to: UInt64
  var operations: [JSON]
  var cause: JSON?
  /// Size of `operations` in JSON nodes, once measured (only merged patches are measured).
  var weight: Int? = nil
  /// `weight` when it was last compared with the state's size, to compare only on doubling.
  var checkedWeight = 0

  /// Appends the bytes of the whole notification line (without the newline).
  func write(to bytes: inout [UInt8]) throws(JSONWriteError) {
    bytes.append(contentsOf: Self.prefix)
    try JSON.string(store).write(to: &bytes)
    bytes.append(contentsOf: Self.fromKey)
    appendDecimal(from, to: &bytes)
    bytes.append(contentsOf: Self.toKey)
    appendDecimal(to, to: &bytes)
    bytes.append(contentsOf: Self.patchKey)
    try JSON.array(operations).write(to: &bytes)
    if let cause {
      bytes.append(contentsOf: Self.causeKey)
      try cause.write(to: &bytes)
    }
    if !path.isEmpty {
      bytes.append(contentsOf: Self.pathKey)
      try JSON.string(path).write(to: &bytes)
    }
    bytes.append(contentsOf: Outgoing.twoBraces)
  }

  private static let prefix = Array(
    #"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"#.utf8)
  private static let fromKey = Array(#","from":"#.utf8)
  private static let toKey = Array(#","to":"#.utf8)
  private static let patchKey = Array(#","patch":"#.utf8)
  private static let causeKey = Array(#","cause":"#.utf8)
  private static let pathKey = Array(#","path":"#.utf8)

  var json: JSON {
    var params: JSONObject = [
      "store": .string(store), "from": .integer(Int64(from)), "to": .integer(Int64(to)),
      "patch": .array(operations),
    ]
    if let cause { params["cause"] = cause }
    if !path.isEmpty { params["path"] = .string(path) }
    return ["jsonrpc": "2.0", "method": "state/patch", "params": .object(params)]
  }

  /// Takes in the next patch of the same subscription: `from` stays, `to` and `cause` move on.
  mutating func absorb(_ next: PatchNotice) {
    let measured = weight ?? Self.weight(of: operations)
    weight = measured + Self.weight(of: next.operations)
    to = next.to
    cause = next.cause
    operations.append(contentsOf: next.operations)
  }

  static func weight(of operations: [JSON]) -> Int {
    operations.reduce(0) { $0 + nodeCount($1, limit: Int.max) }
  }
}

/// The number of values in `value` (itself included), counting stops past `limit`.
func nodeCount(_ value: JSON, limit: Int) -> Int {
  // A patch operation is usually one object of scalars ({op, path, value}): counted without
  // allocating a stack, since a stalled client's merged patch weighs every operation it takes.
  switch value {
  case .array: break
  case .object(let object) where object.count < limit:
    var flat = true
    for member in object.members {
      switch member.value {
      case .array, .object: flat = false
      default: continue
      }
      break
    }
    if flat { return 1 + object.count }
  case .object: break
  default: return 1
  }
  var count = 0
  var stack = [value]
  while let next = stack.popLast() {
    count += 1
    if count > limit { return count }
    switch next {
    case .array(let elements):
      if count + stack.count + elements.count > limit { return limit + 1 }
      stack.append(contentsOf: elements)
    case .object(let object):
      if count + stack.count + object.count > limit { return limit + 1 }
      for member in object.members { stack.append(member.value) }
    default: break
    }
  }
  return count
}

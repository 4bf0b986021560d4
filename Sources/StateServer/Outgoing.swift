import JSON
import StateKit

/// One line the server owes the client, in the order it was produced. Built on the state actor,
/// serialized by the writer thread (so encoding runs in parallel with reducing).
enum Outgoing: Sendable {
  /// A notification or a batch's responses, never merged or dropped. Patches of the stores in
  /// `barriers` may not be merged across it: events, `store/closed`, and responses that carry
  /// a state (a client sets its mirror from them and expects the patches that follow).
  case message(JSON, barriers: [String])
  /// A successful response; the envelope is written by the writer thread.
  case response(id: JSON, result: JSON, barriers: [String])
  /// A line written as text while it is sent: a successful response (the text's `id`) whose
  /// result carries a store's whole view with a large array's elements encoded on demand, a
  /// batch at a time, so that no JSON tree of them is built (`AnyStore.writePublished(to:)`),
  /// or a whole `state/patch` line (no `id`) with such an array among its values (`HeldValue`).
  /// The id is the text's (nil for a notification), not a payload of its own. The state
  /// actor writes it in pieces of about a megabyte after the line is queued, and the writer
  /// thread sends each as it comes (``StreamedText``, ``Connection/stream(_:id:)``,
  /// ``OutputBuffer/stream(_:held:)``).
  case streamed(StreamedText, barriers: [String])
  /// The response to a `dispatch`, `{store, version}`: the hot path, built without objects.
  case dispatched(id: JSON, store: String, version: UInt64)
  case failure(id: JSON, error: RPCError)
  /// A `state/patch` notification, which may absorb later patches of the same subscription
  /// while the writer is blocked.
  case patch(PatchNotice)

  /// What the writer leaves in a batch in place of a line it took out: no references, so
  /// nothing to release (never written).
  static var written: Outgoing { .dispatched(id: .null, store: "", version: 0) }

  /// A patch's `to`, read without copying the patch out (nil for any other line).
  var patchEnd: UInt64? {
    guard case .patch(let notice) = self else { return nil }
    return notice.to
  }

  /// The stores whose patches may not be merged across this line.
  var barriers: [String] {
    switch self {
    case .message(_, let barriers), .response(_, _, let barriers), .streamed(_, let barriers):
      barriers
    case .dispatched, .failure, .patch: []
    }
  }

  /// The line as a JSON value (for a batch, whose responses are written as one array).
  var json: JSON {
    switch self {
    case .message(let message, _): message
    case .response(let id, let result, _): ["jsonrpc": "2.0", "id": id, "result": result]
    case .streamed(let text, _):
      // Only the writer reads a streamed line, piece by piece; read whole, it is parsed back.
      switch (text.collect(), text.id) {
      case ((let result, .finished), let id?):
        ["jsonrpc": "2.0", "id": id, "result": (try? JSON(parsing: result)) ?? .null]
      case ((let line, .finished), nil): (try? JSON(parsing: line)) ?? .null
      case ((_, .failed(let replacement?)), _): replacement.json
      case ((_, .failed(nil)), _): .null
      }
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
    case .streamed(let text, _): text.id
    case .message(let message, _): message["id"]
    case .patch: nil
    }
  }

  /// Whether ``write(to:)`` cannot fail: every value in the line can be written as JSON (see
  /// ``JSON/checkWritable()``).
  var isWritable: Bool {
    do {
      switch self {
      case .message(let message, _): try message.checkWritable()
      case .response(let id, let result, _):
        try id.checkWritable()
        try result.checkWritable()
      case .streamed(let text, _): try text.id?.checkWritable()
      case .dispatched: break
      case .failure(let id, let error):
        try id.checkWritable()
        try error.json.checkWritable()
      case .patch(let notice):
        // Written as one array, so checked as one: its elements are a level down.
        try JSON.array(notice.operations).checkWritable()
        try notice.cause?.checkWritable()
      }
      return true
    } catch {
      return false
    }
  }

  /// Writes `{"jsonrpc":"2.0","id":<id>,"result":`, what a successful response begins with.
  static func writeResultHead(id: JSON, to writer: inout JSONWriter) throws(JSONWriteError) {
    writer.append(#"{"jsonrpc":"2.0","id":"#)
    if !writer.writeIfInteger(id) { try writer.write(id) }
    writer.append(#","result":"#)
  }

  /// Writes the line's bytes and its newline; on failure nothing of the line stays written.
  func write(to writer: inout JSONWriter) throws(JSONWriteError) {
    let start = writer.count
    do throws(JSONWriteError) {
      switch self {
      case .message(let message, _):
        try writer.write(message)
      case .response(let id, let result, _):
        try Self.writeResultHead(id: id, to: &writer)
        try writer.write(result)
        writer.append(UInt8(ascii: "}"))
      case .streamed(let text, _):
        // The writer thread sends a streamed line as it comes; written whole, it waits for it.
        let id = text.id
        switch text.collect() {
        case (let result, .finished):
          if let id { try Self.writeResultHead(id: id, to: &writer) }
          writer.append(contentsOf: result)
          if id != nil { writer.append(UInt8(ascii: "}")) }
        case (_, .failed(let replacement?)):
          try replacement.write(to: &writer)
          return
        case (_, .failed(nil)):
          return
        }
      case .dispatched(let id, let store, let version):
        writer.append(#"{"jsonrpc":"2.0","id":"#)
        if !writer.writeIfInteger(id) { try writer.write(id) }
        writer.append(#","result":{"store":"#)
        writer.write(string: store)
        writer.append(#","version":"#)
        writer.write(unsigned: version)
        writer.append("}}")
      case .failure(let id, let error):
        writer.append(#"{"jsonrpc":"2.0","id":"#)
        try writer.write(id)
        writer.append(#","error":"#)
        try writer.write(error.json)
        writer.append(UInt8(ascii: "}"))
      case .patch(let notice):
        try notice.write(to: &writer)
      }
    } catch {
      writer.truncate(to: start)
      throw error
    }
    writer.append(0x0A)
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

  /// Writes the whole notification line (without the newline); the fixed parts are written as
  /// they are, with no `JSON` value built around the operations.
  func write(to writer: inout JSONWriter) throws(JSONWriteError) {
    writeHead(to: &writer)
    try writer.write(array: operations)
    try writeTail(to: &writer)
  }

  /// The line up to its operations (`..."patch":`).
  func writeHead(to writer: inout JSONWriter) {
    writer.append(#"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"#)
    writer.write(string: store)
    writer.append(#","from":"#)
    writer.write(unsigned: from)
    writer.append(#","to":"#)
    writer.write(unsigned: to)
    writer.append(#","patch":"#)
  }

  /// The line after its operations.
  func writeTail(to writer: inout JSONWriter) throws(JSONWriteError) {
    switch cause {
    case .some(.integer(let id)):
      writer.append(#","cause":"#)
      writer.write(integer: id)
    default:
      try writer.write(#","cause":"#, ifPresent: cause)
    }
    if !path.isEmpty {
      writer.append(#","path":"#)
      writer.write(string: path)
    }
    writer.append("}}")
  }

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

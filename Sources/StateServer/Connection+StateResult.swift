import JSON
import StateKit

/// A result made of `head`'s members and `"state"`, which `write` writes as text: a store's whole
/// view with a large array's elements encoded on demand, never a JSON tree of them next to the
/// state (docs/architecture.md, "The open at scale"). Written while it is sent when answered on
/// its own line (``Connection/stream(_:id:)``); inside a batch, whose responses are one array,
/// it is the JSON value of `fallback`.
@StateActor
struct WrittenResult {
  var head: JSONObject
  /// Stores whose queued patches must not be merged across the response (it carries their
  /// state).
  var barriers: [String]
  var write: (inout JSONWriter) throws -> Void
  /// The state as a JSON value: for a batch, and for a state that cannot be written as text.
  var fallback: () -> JSON

  /// The result as a JSON value.
  var json: JSON {
    var result = head
    result["state"] = fallback()
    return .object(result)
  }

  /// Writes the result's text into `text` a megabyte at a time, and its end.
  func write(into text: StreamedText, id: JSON) {
    do {
      try text.write { writer in
        try writer.write(head, appending: "state") { try write(&$0) }
      }
    } catch {
      // What JSON cannot hold (a NaN in the state) is reported as the JSON path reports it:
      // the writer finds the value unwritable and answers with the reason.
      text.end(.failed(replacement: .response(id: id, result: json, barriers: barriers)))
    }
  }
}

extension JSONWriter {
  /// Writes `object` with one member more at its end, `key`, whose value `value` writes: an
  /// object whose largest member is written as text, never held as a value.
  mutating func write(
    _ object: JSONObject, appending key: String, _ value: (inout JSONWriter) throws -> Void
  ) throws {
    append(UInt8(ascii: "{"))
    for position in 0..<object.count {
      write(string: object.key(at: position))
      append(UInt8(ascii: ":"))
      try write(object.value(at: position))
      append(UInt8(ascii: ","))
    }
    write(string: key)
    append(UInt8(ascii: ":"))
    try value(&self)
    append(UInt8(ascii: "}"))
  }
}

extension Connection {
  /// A result made of `head`'s members and `"state"`, the store's whole published view. A
  /// store that encodes a large array's elements on demand (`AnyStore.publishedElementsLeftOut`)
  /// has it written as text while it is sent. Any other store's view is the JSON it keeps,
  /// answered as before.
  func stateResult(_ head: JSONObject, of store: any AnyStore) -> Outcome {
    guard store.publishedElementsLeftOut > 0 else {
      var result = head
      result["state"] = store.published
      return .result(.object(result), barriers: [store.id])
    }
    return writtenResult(
      head, barriers: [store.id], writingState: store.writePublished, else: store.published)
  }

  /// A result made of `head`'s members and `"state"`, which `writeState` writes as text, or, when
  /// it cannot (a value JSON cannot hold), whose state is `fallback()`.
  func writtenResult(
    _ head: JSONObject, barriers: [String],
    writingState writeState: @escaping (inout JSONWriter) throws -> Void,
    else fallback: @escaping @autoclosure () -> JSON
  ) -> Outcome {
    .written(WrittenResult(head: head, barriers: barriers, write: writeState, fallback: fallback))
  }

  /// Answers a request with `result` written while it is sent: whatever this turn queued before
  /// it is committed first (so the stores it carries are on disk before any of it leaves), then
  /// its line is queued, and only then is its text written, a piece at a time, each handed to the
  /// writer thread as it is made.
  func stream(_ result: WrittenResult, id: JSON) {
    switch buffer.streamedLine(id: id, carrying: result.barriers) {
    case .success(let text): result.write(into: text, id: id)
    case .failure(let refusal): emit(.failure(id: id, error: refusal))
    }
  }

}

extension PatchNotice {
  /// Writes the notification's line into `text` a megabyte at a time, each of `held` written
  /// from the state where its operation has no value. A value that cannot be written (a NaN in the
  /// state) ends the text there: a notification answers nothing, so the failure is logged, and
  /// the client's next patch does not follow on from its last (`from`), which tells it to read
  /// the state again.
  @StateActor
  func write(into text: StreamedText, held: [HeldValue], log: Log) {
    do {
      try text.write { writer in
        writeHead(to: &writer)
        writer.append(UInt8(ascii: "["))
        for (index, operation) in operations.enumerated() {
          if index > 0 { writer.append(UInt8(ascii: ",")) }
          if let value = held.first(where: { $0.operation == index }),
            case .object(let object) = operation
          {
            try writer.write(object, appending: "value") { try value.write(to: &$0) }
          } else {
            try writer.write(operation)
          }
        }
        writer.append(UInt8(ascii: "]"))
        try writeTail(to: &writer)
      }
    } catch {
      log.error("cannot write a patch", ["store": store, "reason": "\(error)"])
      text.end(.failed(replacement: nil))
    }
  }
}

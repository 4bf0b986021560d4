import JSON
import StateKit

extension Connection {
  /// A result made of `head`'s members and `"state"`, the store's whole published view. A
  /// store that encodes a large array's elements on demand (`AnyStore.publishedElementsLeftOut`)
  /// has it written as text here, a batch of elements at a time: the answer then costs the
  /// text, never a JSON tree of the whole view next to the state (docs/architecture.md, "The
  /// open at scale"). Any other store's view is the JSON it keeps, answered as before.
  func stateResult(_ head: JSONObject, of store: any AnyStore) -> Outcome {
    guard store.publishedElementsLeftOut > 0 else {
      var result = head
      result["state"] = store.published
      return .result(.object(result), barriers: [store.id])
    }
    return writtenResult(
      head, barriers: [store.id], writingState: store.writePublished, else: store.published)
  }

  /// A result made of `head`'s members and `"state"`, which `writeState` writes as text.
  /// Handed on in pieces as the buffer fills: neither a buffer grown to the whole text (and
  /// the copies its doublings make) nor a copy of it at the end. When the state is not writable
  /// (a value JSON cannot hold), the result carries `fallback()`, whose JSON path reports it as
  /// it always did.
  func writtenResult(
    _ head: JSONObject, barriers: [String],
    writingState writeState: (inout JSONWriter) throws -> Void,
    else fallback: @autoclosure () -> JSON
  ) -> Outcome {
    let piece = 1 << 20
    var pieces: [[UInt8]] = []
    var writer = JSONWriter(capacity: piece)
    do {
      try writer.write(handingOnAt: piece, to: { pieces.append([UInt8]($0)) }) { writer in
        writer.append(UInt8(ascii: "{"))
        for position in 0..<head.count {
          writer.write(string: head.key(at: position))
          writer.append(UInt8(ascii: ":"))
          try writer.write(head.value(at: position))
          writer.append(UInt8(ascii: ","))
        }
        writer.append(#""state":"#)
        try writeState(&writer)
        writer.append(UInt8(ascii: "}"))
      }
    } catch {
      var result = head
      result["state"] = fallback()
      return .result(.object(result), barriers: barriers)
    }
    writer.withUnsafeBytes { pieces.append([UInt8]($0)) }
    return .serialized(pieces, barriers: barriers)
  }
}

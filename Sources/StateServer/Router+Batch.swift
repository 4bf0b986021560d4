import JSON
import StateKit

/// JSON-RPC batches: an array of requests answered by one array of responses.
extension Router {
  /// A JSON-RPC batch: one array of responses once every request in it is answered; no line at
  /// all when it held only notifications. A client that reads no batch responses
  /// (`capabilities.batch: false`) gets each response on its own line instead.
  func receiveBatch(
    _ elements: [JSON], refusals: [JSONParseError.Refusal], on connection: Connection
  ) {
    guard !elements.isEmpty else {
      connection.emit(
        .failure(id: .null, error: .invalidRequest("an empty batch; send at least one request")))
      return
    }
    // Each element's refusals, pointed at from the element (rare: only when the parser refused
    // members of the line).
    var refusalsByElement: [Int: [JSONParseError.Refusal]] = [:]
    for refusal in refusals {
      guard let first = refusal.pointer.tokens.first, let index = Int(first) else { continue }
      var own = refusal
      own.pointer = JSONPointer(tokens: Array(refusal.pointer.tokens.dropFirst()))
      refusalsByElement[index, default: []].append(own)
    }
    guard connection.progress.readsBatches else {
      // The client said it reads no batch responses (`capabilities.batch: false`): each element
      // is answered on its own line as soon as it is ready, as if sent alone.
      for (index, element) in elements.enumerated() {
        switch serve(element, refusals: refusalsByElement[index] ?? [], on: connection) {
        case .none: break
        case .some(.now(let line)): connection.emit(line)
        case .some(.later(let reply)):
          reply.onResolve = { [weak connection] in connection?.emit($0) }
        case .some(.streamed(let id, let result)): connection.stream(result, id: id)
        }
      }
      return
    }
    let batch = BatchReply()
    for (index, element) in elements.enumerated() {
      switch serve(element, refusals: refusalsByElement[index] ?? [], on: connection) {
      case .none: break
      case .some(.now(let line)):
        batch.responses.append(line.json)
        batch.barriers += line.barriers
      case .some(.streamed(let id, let result)):
        // One array holds every response of the batch: the result goes in as a JSON value.
        batch.responses.append(Outgoing.response(id: id, result: result.json, barriers: []).json)
        batch.barriers += result.barriers
      case .some(.later(let reply)):
        let slot = batch.responses.count
        batch.responses.append(.null)
        batch.waiting += 1
        reply.onResolve = { [weak connection] response in
          batch.responses[slot] = response.json
          batch.waiting -= 1
          if batch.waiting == 0 {
            connection?.emit(.message(.array(batch.responses), barriers: batch.barriers))
          }
        }
      }
    }
    if !batch.responses.isEmpty && batch.waiting == 0 {
      connection.emit(.message(.array(batch.responses), barriers: batch.barriers))
    }
  }
}

/// The responses of one batch, written as one array when the last of them is ready.
@StateActor
private final class BatchReply {
  var responses: [JSON] = []
  var barriers: [String] = []
  var waiting = 0
}

import JSON

/// What a line will cost once encoded, estimated without encoding it: the unit of the output
/// budget (``OutputQueue``), from ``JSON/estimatedEncodedSize`` of its values.
extension Outgoing {
  var estimatedBytes: Int {
    switch self {
    case .message(let message, _): message.estimatedEncodedSize
    case .response(let id, let result, _):
      32 + id.estimatedEncodedSize + result.estimatedEncodedSize
    // Its pieces count as they are written (``StreamedText``).
    case .streamed(let text, _): 32 + (text.id?.estimatedEncodedSize ?? 0)
    case .dispatched(let id, let store, _): 64 + id.estimatedEncodedSize + store.utf8.count
    case .failure(let id, let error): 32 + id.estimatedEncodedSize + error.json.estimatedEncodedSize
    case .patch(let notice): notice.estimatedBytes
    }
  }
}

extension PatchNotice {
  var estimatedBytes: Int {
    var total = 96 + store.utf8.count + path.utf8.count
    if let cause { total += cause.estimatedEncodedSize }
    // Read in place: weighing each operation copied it out of the array first.
    return total + operations.estimatedEncodedSizeOfElements
  }
}

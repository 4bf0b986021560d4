import JSON

/// What a line will cost once encoded, estimated without encoding it: the unit of the output
/// budget (``OutputQueue``). Strings count their UTF-8 bytes (escapes aside), numbers their
/// longest spelling, so the estimate is close for the text-heavy states that make output large.
extension Outgoing {
  var estimatedBytes: Int {
    switch self {
    case .message(let message, _): estimatedSize(of: message)
    case .response(let id, let result, _): 32 + estimatedSize(of: id) + estimatedSize(of: result)
    case .dispatched(let id, let store, _): 64 + estimatedSize(of: id) + store.utf8.count
    case .failure(let id, let error): 32 + estimatedSize(of: id) + estimatedSize(of: error.json)
    case .patch(let notice): notice.estimatedBytes
    }
  }
}

extension PatchNotice {
  var estimatedBytes: Int {
    var total = 96 + store.utf8.count + path.utf8.count
    if let cause { total += estimatedSize(of: cause) }
    for operation in operations { total += 1 + estimatedSize(of: operation) }
    return total
  }
}

/// The encoded size of `value`, estimated in one walk (no allocation for scalars).
func estimatedSize(of value: JSON) -> Int {
  switch value {
  case .null: return 4
  case .bool: return 5
  case .integer: return 20
  case .double: return 24
  case .string(let string): return string.utf8.count + 2
  case .array(let elements):
    var total = 2
    for element in elements { total += 1 + estimatedSize(of: element) }
    return total
  case .object(let object):
    var total = 2
    for member in object.members {
      total += member.key.utf8.count + 4 + estimatedSize(of: member.value)
    }
    return total
  }
}

extension JSON {
  /// The length of the value's compact JSON text, estimated in one walk without writing it:
  /// strings count their UTF-8 bytes (escapes aside), numbers their longest spelling, so the
  /// estimate is close for the text-heavy values that make output large. The server weighs its
  /// queued output by it (once per line, on the thread that the pipeline waits for: members
  /// are read in place, without copying them out).
  public var estimatedEncodedSize: Int {
    switch self {
    case .null: return 4
    case .bool: return 5
    case .integer: return 20
    case .double: return 24
    case .string(let string): return string.utf8.count &+ 2
    case .array(let elements):
      var total = 2
      for element in elements { total &+= 1 &+ element.estimatedEncodedSize }
      return total
    case .object(let object):
      return object.withMembers { members in
        var total = 2
        for position in members.indices {
          total &+= members[position].key.utf8.count &+ 4
          // Scalars counted here: a patch operation is an object of scalars, weighed once per
          // line queued, and the call per member cost more than the counting.
          total &+=
            JSON.scalarEstimate(members, position)
            ?? members[position].value.estimatedEncodedSize
        }
        return total
      }
    }
  }

  /// ``estimatedEncodedSize`` of the member at `position` when its value is a scalar, read
  /// where it lies (always inlined: passed to a function, the value would be copied, an atomic
  /// retain and release); nil for an array or an object.
  @inline(__always)
  static func scalarEstimate(_ members: UnsafeBufferPointer<JSONObject.Member>, _ position: Int)
    -> Int?
  {
    switch members[position].value {
    case .null: return 4
    case .bool: return 5
    case .integer: return 20
    case .double: return 24
    case .string(let string): return string.utf8.count &+ 2
    case .array, .object: return nil
    }
  }
}

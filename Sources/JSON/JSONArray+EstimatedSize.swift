extension Array where Element == JSON {
  /// The elements' share of the array's ``JSON/estimatedEncodedSize``: each element's estimate
  /// plus one for its separator, the brackets not counted. The server weighs a patch's
  /// operations by it, once per line queued.
  ///
  /// Read in place: passing each element to `estimatedEncodedSize` copied it out of the array
  /// first, a retain and a release (atomic) per operation. An object of scalars (a patch
  /// operation, `{op, path, value}`) is counted here, with no call while it is borrowed;
  /// anything deeper is asked of `estimatedEncodedSize`.
  public var estimatedEncodedSizeOfElements: Int {
    withUnsafeBufferPointer { elements in
      var total = 0
      for index in elements.indices {
        let flat: Int?
        switch elements[index] {
        case .object(let object): flat = object.withMembers(Self.flatObjectSize)
        default: flat = nil
        }
        total &+= 1 &+ (flat ?? elements[index].estimatedEncodedSize)
      }
      return total
    }
  }

  /// ``JSON/estimatedEncodedSize`` of an object whose members are all scalars; nil when one is
  /// an array or an object.
  @inline(__always)
  private static func flatObjectSize(_ members: UnsafeBufferPointer<JSONObject.Member>) -> Int? {
    var total = 2
    for position in members.indices {
      guard let value = JSON.scalarEstimate(members, position) else { return nil }
      total &+= members[position].key.utf8.count &+ 4 &+ value
    }
    return total
  }
}

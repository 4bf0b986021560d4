import JSON

extension JSON {
  /// Whether the value holds an array of `ArrayElision.threshold` elements or more: one a
  /// store keeps in its typed state only, so its JSON is never where a publisher or a journal
  /// starts from (`ViewPublisher.restored`), and a restore decodes it consuming
  /// (`Store.restore`).
  public var holdsElidedArray: Bool { holdsArray(ofAtLeast: ArrayElision.threshold) }

  func holdsArray(ofAtLeast count: Int) -> Bool {
    switch self {
    case .array(let elements):
      return elements.count >= count || elements.contains { $0.holdsArray(ofAtLeast: count) }
    case .object(let object):
      return (0..<object.count).contains { object.value(at: $0).holdsArray(ofAtLeast: count) }
    default: return false
    }
  }

  /// The value with every array of `ArrayElision.threshold` elements or more emptied: the rest
  /// is shared, and the containers on the way to such an array are new, so that the arrays
  /// themselves stay held by `self` alone.
  func emptyingElidedArrays() -> JSON {
    switch self {
    case .array(let elements):
      if elements.count >= ArrayElision.threshold { return .array([]) }
      guard elements.contains(where: \.holdsElidedArray) else { return self }
      return .array(elements.map { $0.emptyingElidedArrays() })
    case .object(let object):
      guard holdsElidedArray else { return self }
      var shell = JSONObject(reservingCapacity: object.count)
      for position in 0..<object.count {
        shell[object.key(at: position)] = object.value(at: position).emptyingElidedArrays()
      }
      return .object(shell)
    default: return self
    }
  }
}

// Serialized sizes, so that a diff can tell when its operations would outweigh a plain
// `replace`. The counts match `JSONWriter` byte for byte: compact text, strings escaped only
// where RFC 8259 requires, doubles in Swift's shortest round-trip form.

extension JSON {
  /// The length in bytes of the compact JSON text of this value, or some number above `limit`
  /// as soon as it is known to exceed it (so a large value is not walked to the end).
  func serializedSize(limit: Int = .max) -> Int {
    var total = 0
    addSerializedSize(to: &total, limit: limit)
    return total
  }

  private func addSerializedSize(to total: inout Int, limit: Int) {
    guard total <= limit else { return }
    switch self {
    case .null: total += 4
    case .bool(let flag): total += flag ? 4 : 5
    case .integer(let integer): total += JSON.digitCount(integer)
    case .double(let double): total += double.description.utf8.count
    case .string(let string): total += JSON.serializedSize(of: string)
    case .array(let elements):
      total += elements.isEmpty ? 2 : 1 + elements.count  // brackets and commas
      for element in elements {
        element.addSerializedSize(to: &total, limit: limit)
        if total > limit { return }
      }
    case .object(let object):
      total += object.isEmpty ? 2 : 1 + 2 * object.count  // braces, colons and commas
      for (key, value) in object.members {
        total += JSON.serializedSize(of: key)
        value.addSerializedSize(to: &total, limit: limit)
        if total > limit { return }
      }
    }
  }

  static func digitCount(_ integer: Int64) -> Int {
    var magnitude = integer.magnitude
    var digits = 1
    while magnitude >= 10 {
      magnitude /= 10
      digits += 1
    }
    return integer < 0 ? digits + 1 : digits
  }

  /// The size of `string` as a JSON string literal, quotes and escapes included.
  static func serializedSize(of string: String) -> Int {
    var size = 2
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x09, 0x0A, 0x0C, 0x0D: size += 2
      case 0..<0x20: size += 6
      default: size += 1
      }
    }
    return size
  }
}

extension JSONPatch.Operation {
  /// The length of this operation's compact wire form, e.g.
  /// `{"op":"replace","path":"/a","value":1}`.
  var serializedSize: Int {
    // `{"op":"` + name + `"` + `,"path":` + path + `,"from":` + from + `,"value":` + value + `}`
    var size = 7 + name.utf8.count + 1 + 8 + JSON.serializedSize(of: path.description) + 1
    if let from { size += 8 + JSON.serializedSize(of: from.description) }
    if let value { size += 9 + value.serializedSize() }
    return size
  }
}

extension JSONPatch {
  /// The length of the patch's compact wire form (the JSON array of its operations).
  public var serializedSize: Int {
    operations.reduce(operations.isEmpty ? 2 : 1 + operations.count) { $0 + $1.serializedSize }
  }
}

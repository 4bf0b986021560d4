/// A coding key made at run time: an object member's name, or an array position (whose string
/// value is the index, so a coding path reads as a JSON Pointer).
struct CodingPathKey: CodingKey {
  let stringValue: String
  let intValue: Int?

  init(stringValue: String) {
    self.stringValue = stringValue
    intValue = nil
  }

  init(intValue: Int) {
    stringValue = String(intValue)
    self.intValue = intValue
  }

  /// `super` in a keyed container, as Foundation's coders name it.
  static let `super` = CodingPathKey(stringValue: "super")
}

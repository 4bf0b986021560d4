/// A coding key made at run time: an object member's name, or an array position (whose string
/// value is the index, so a coding path reads as a JSON Pointer).
///
/// Three words (a name, or a position with an empty name), so that it fits an `any CodingKey`
/// inline: with an optional integer beside the name it took a heap box in every decoder made
/// for an array element, and the position's text was made for every element, though it is
/// only read when a coding path is (an error).
struct CodingPathKey: CodingKey {
  private let name: String
  /// The position, or `Self.noPosition` for a member's name.
  private let position: Int
  private static let noPosition = Int.min

  var stringValue: String { position == Self.noPosition ? name : String(position) }
  var intValue: Int? { position == Self.noPosition ? nil : position }

  init(stringValue: String) {
    name = stringValue
    position = Self.noPosition
  }

  init(intValue: Int) {
    // `Int.min` is the marker; such a position can only be named.
    name = intValue == Self.noPosition ? String(intValue) : ""
    position = intValue
  }

  /// `super` in a keyed container, as Foundation's coders name it.
  static let `super` = CodingPathKey(stringValue: "super")
}

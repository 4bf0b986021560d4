/// A type coded as one JSON object per case, told apart by a string member `tagKey` whose
/// values are `Tag`'s raw values: `{"screen": "userDetail", "userId": 42}`. The probe describes
/// it as a `oneOf` with one branch per tag, the tag a required `const`.
///
/// ```swift
/// extension Destination: TaggedUnion {
///   public enum Screen: String, CaseIterable, Codable { case userDetail, settings }
///   public static let tagKey = "screen"
/// }
/// ```
public protocol TaggedUnion: Decodable {
  /// The tags, one per case.
  associatedtype Tag: CaseIterable & RawRepresentable where Tag.RawValue == String
  /// The member that names the case.
  static var tagKey: String { get }
}

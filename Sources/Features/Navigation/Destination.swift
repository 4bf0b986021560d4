import StateKit

/// A screen on the navigation stack: `{"screen": "userDetail", "userId": 42}` or
/// `{"screen": "settings"}`.
public enum Destination: Codable, Equatable, Sendable, TaggedUnion {
  case userDetail(userId: Int)
  case settings

  /// The screens, as `screen` names them: decoding switches over them, so a new case cannot
  /// be left out of the schema.
  public enum Tag: String, CaseIterable, Codable, Sendable {
    case userDetail, settings
  }

  public static let tagKey = "screen"

  private enum CodingKeys: String, CodingKey {
    case screen, userId
  }

  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    switch try container.decode(Tag.self, forKey: .screen) {
    case .userDetail:
      self = .userDetail(userId: try container.decode(Int.self, forKey: .userId))
    case .settings:
      self = .settings
    }
  }

  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    switch self {
    case .userDetail(let userId):
      try container.encode(Tag.userDetail, forKey: .screen)
      try container.encode(userId, forKey: .userId)
    case .settings:
      try container.encode(Tag.settings, forKey: .screen)
    }
  }

  /// The destination an `app://` URL names: `app://users/42` or `app://settings`; `nil` for
  /// anything else.
  public init?(url: String) {
    let scheme = "app://"
    guard url.lowercased().hasPrefix(scheme) else { return nil }
    let parts = url.dropFirst(scheme.count).split(separator: "/").map(String.init)
    switch (parts.first?.lowercased(), parts.count) {
    case ("users", 2):
      guard let id = Int(parts[1]), id > 0, String(id) == parts[1] else { return nil }
      self = .userDetail(userId: id)
    case ("settings", 1):
      self = .settings
    default:
      return nil
    }
  }
}

/// Where an edit stands with the server: untouched, being saved, refused, or saved.
public struct SaveState: Codable, Equatable, Sendable {
  /// Where the save stands.
  public enum Status: String, Codable, Sendable {
    case idle, saving, failed, saved
  }

  /// Where the save stands.
  public var status: Status
  /// A safe, user-facing message when `failed`; `null` otherwise.
  public var message: String?

  /// A save state; idle by default.
  public init(status: Status = .idle, message: String? = nil) {
    self.status = status
    self.message = message
  }

  private enum CodingKeys: String, CodingKey {
    case status, message
  }

  // Written by hand so that absent values are `null` on the wire, not missing keys.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(status, forKey: .status)
    try container.encode(message, forKey: .message)
  }
}

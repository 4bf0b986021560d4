/// Where an edit stands with the server: untouched, being saved, refused, or saved.
public struct SaveState: Codable, Equatable, Sendable {
  /// Where the save stands.
  public enum Status: String, CaseIterable, Codable, Sendable {
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
}

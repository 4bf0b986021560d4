/// A person in the users directory, as the backend serves it.
public struct User: Codable, Equatable, Identifiable, Sendable {
  /// 1 to 50 for the sample users.
  public var id: Int
  public var name: String
  public var email: String

  /// A user.
  public init(id: Int, name: String, email: String) {
    self.id = id
    self.name = name
    self.email = email
  }

  /// Whether `query` (already trimmed, case-insensitive) occurs in the name or the email.
  public func matches(_ query: String) -> Bool {
    let needle = query.lowercased()
    return name.lowercased().contains(needle) || email.lowercased().contains(needle)
  }
}

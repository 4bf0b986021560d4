/// A person in the users directory, as the backend serves it.
public struct User: Codable, Equatable, Identifiable, Sendable {
  /// 1 to 50 for the sample users.
  public var id: Int
  public var name: String
  public var email: String
  /// The server's version of this user, raised by one at every change on the server. Copies
  /// are reconciled by it, never by wall-clock time: the higher version is the newer copy.
  public var version: Int

  /// A user; version 1 is the server's first copy.
  public init(id: Int, name: String, email: String, version: Int = 1) {
    self.id = id
    self.name = name
    self.email = email
    self.version = version
  }

  /// Whether `query` (already trimmed, case-insensitive) occurs in the name or the email.
  public func matches(_ query: String) -> Bool {
    let needle = query.lowercased()
    return name.lowercased().contains(needle) || email.lowercased().contains(needle)
  }
}

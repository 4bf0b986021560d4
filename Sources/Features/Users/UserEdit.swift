/// A local rename not yet confirmed by the server, and where it stands.
///
/// The edit remembers the server version it was made on (`baseVersion`): a server copy at or
/// below it changed nothing the user has not seen, so the edit is kept and sent; a newer server
/// copy with another name is a conflict, kept with the server's side until the user resolves
/// it (`resolveConflict`). Versions decide, never timestamps: two clocks disagree, versions
/// handed out by one server do not.
public struct UserEdit: Codable, Equatable, Identifiable, Sendable {
  /// Where a local edit stands with the server.
  public enum Status: String, Codable, Sendable, CaseIterable {
    /// Waiting to be sent (the next `load` sends it, as does the next `rename`).
    case pending
    /// On its way to the server.
    case sending
    /// The server's copy changed meanwhile; `serverName` holds it until the user chooses.
    case conflict
  }

  /// The user's id.
  public var id: Int
  /// The name as edited locally (also the name the list shows).
  public var name: String
  /// The server version the edit was made on.
  public var baseVersion: Int
  /// The name at `baseVersion`, before the edit: what a rename the server refuses rolls back
  /// to. `null` in edits saved before it was kept (those are never rolled back).
  public var previousName: String?
  /// Where the edit stands.
  public var status: Status
  /// The server's name while in `conflict`; `null` otherwise.
  public var serverName: String?
  /// The server's version while in `conflict`; `null` otherwise.
  public var serverVersion: Int?

  /// An edit of user `id`, pending by default.
  public init(
    id: Int, name: String, baseVersion: Int, previousName: String? = nil,
    status: Status = .pending, serverName: String? = nil, serverVersion: Int? = nil
  ) {
    self.id = id
    self.name = name
    self.baseVersion = baseVersion
    self.previousName = previousName
    self.status = status
    self.serverName = serverName
    self.serverVersion = serverVersion
  }

  /// The newest server version this edit knows of.
  var knownVersion: Int { max(baseVersion, serverVersion ?? baseVersion) }
}

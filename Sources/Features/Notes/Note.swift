import FoundationEssentials

/// One field note, as the user sees it: the local text, where it stands with the server, and
/// the server's text when both changed.
public struct Note: Codable, Equatable, Identifiable, Sendable {
  /// Where a note stands with the server.
  public enum SyncStatus: String, CaseIterable, Codable, Sendable {
    /// Changed locally and not yet confirmed by the server.
    case pendingUpload
    case synchronized
    /// Uploading failed after the retries; the next `sync` tries again.
    case failed
    /// The server's copy changed meanwhile; `serverText` holds it until the user chooses.
    case conflict
  }

  /// The local id (`note-7`, or a client's own).
  public var id: String
  /// The server's id, once the note was uploaded.
  public var serverId: String?
  /// The local text.
  public var text: String
  /// When the note was made (ISO 8601 on the wire).
  public var createdAt: Date
  /// When its text or its sync status was last changed by the user.
  public var updatedAt: Date
  /// Where the note stands with the server.
  public var syncStatus: SyncStatus
  /// The server's text while in `conflict`; `null` otherwise.
  public var serverText: String?

  /// A note, pending upload by default.
  public init(
    id: String, serverId: String? = nil, text: String, createdAt: Date, updatedAt: Date,
    syncStatus: SyncStatus = .pendingUpload, serverText: String? = nil
  ) {
    self.id = id
    self.serverId = serverId
    self.text = text
    self.createdAt = createdAt
    self.updatedAt = updatedAt
    self.syncStatus = syncStatus
    self.serverText = serverText
  }

  /// Not yet confirmed by the server and waiting for the next `sync` (a conflict waits for the
  /// user instead).
  public var needsUpload: Bool {
    syncStatus == .pendingUpload || syncStatus == .failed
  }
}

import FoundationEssentials
import JSON
import StateKit

extension NotesFeature {
  /// Where the last `sync` stands.
  public struct SyncState: Codable, Equatable, Sendable {
    /// What the last sync did.
    public enum Status: String, CaseIterable, Codable, Sendable {
      case idle, syncing, offline, failed
    }

    /// What the sync is doing or how it ended.
    public var status: Status
    /// When a sync last completed with everything uploaded.
    public var lastSyncedAt: Date?
    /// What the user is told when the sync went offline or failed.
    public var message: String?

    /// A sync state; idle by default.
    public init(status: Status = .idle, lastSyncedAt: Date? = nil, message: String? = nil) {
      self.status = status
      self.lastSyncedAt = lastSyncedAt
      self.message = message
    }
  }

  /// The notes and what the sync needs to know privately. Notes change only through
  /// `insert`, `update` and `remove`, which keep the count of notes needing upload current:
  /// the view's `pending` then costs nothing, even with 100,000 notes.
  public struct State: Codable, Equatable, Sendable {
    /// The notes, in creation order.
    public private(set) var notes: IdentifiedArray<Note>
    /// The last sync.
    public var sync: SyncState
    /// The server revision each note's text is based on, by note id: an upload from an older
    /// revision is a conflict. Private.
    public var baseRevisions: [String: Int]
    /// Server ids of notes deleted locally, to delete on the server at the next sync. Private.
    public var pendingDeletes: [String]
    /// Numbers the next new note's id (`note-7`). Private.
    public var nextNumber: Int
    /// How many notes need upload; derived from `notes`, never encoded.
    public private(set) var pending: Int

    /// A state; `pending` is counted from `notes`.
    public init(
      notes: IdentifiedArray<Note> = [], sync: SyncState = SyncState(),
      baseRevisions: [String: Int] = [:], pendingDeletes: [String] = [], nextNumber: Int = 1
    ) {
      self.notes = notes
      self.sync = sync
      self.baseRevisions = baseRevisions
      self.pendingDeletes = pendingDeletes
      self.nextNumber = nextNumber
      pending = notes.reduce(0) { $0 + ($1.needsUpload ? 1 : 0) }
    }

    private enum CodingKeys: String, CodingKey, CaseIterable {
      case notes, sync, baseRevisions, pendingDeletes, nextNumber
    }

    /// Whether this state, decoded from `saved`, is another than the one saved
    /// (`NotesFeature.decodingChanged(_:from:)`). `init(from:)` settles only the sync; every
    /// other member is read as `encode(to:)` wrote it. So the state is the one saved when its
    /// sync is: compared alone, whatever the number of notes. `nil` for a saved state without
    /// exactly the members `encode(to:)` writes, which it did not write (a default filled in is
    /// a change only the whole comparison sees).
    func differs(from saved: JSON) -> Bool? {
      guard let members = saved.objectValue, members.count == CodingKeys.allCases.count,
        members.keys.allSatisfy({ CodingKeys(stringValue: $0) != nil })
      else { return nil }
      return !NotesFeature.decoded(sync, isSaved: members["sync"])
    }

    /// Decodes a saved state or a client's initial one (`store/open` with many notes). A sync
    /// cannot survive the process that ran it, so a state saved while `syncing` comes back
    /// `idle`, its notes still pending.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      var sync = try container.decodeIfPresent(SyncState.self, forKey: .sync) ?? SyncState()
      if sync.status == .syncing { sync.status = .idle }
      self.init(
        // Decoded as an array of `Note` (on two threads when large: ParallelDecodedArray),
        // then indexed: the index is then built by code specialized for `Note`
        // (IdentifiedArray.init(decoded:codingPath:)), not by the generic decoding.
        notes: try container.decodeIfPresent(ParallelDecodedArray<Note>.self, forKey: .notes).map {
          try IdentifiedArray(
            decoded: $0.elements, codingPath: container.codingPath + [CodingKeys.notes])
        } ?? [],
        sync: sync,
        baseRevisions: try container.decodeIfPresent([String: Int].self, forKey: .baseRevisions)
          ?? [:],
        pendingDeletes: try container.decodeIfPresent([String].self, forKey: .pendingDeletes) ?? [],
        nextNumber: try container.decodeIfPresent(Int.self, forKey: .nextNumber) ?? 1)
    }

    public func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(notes, forKey: .notes)
      try container.encode(sync, forKey: .sync)
      try container.encode(baseRevisions, forKey: .baseRevisions)
      try container.encode(pendingDeletes, forKey: .pendingDeletes)
      try container.encode(nextNumber, forKey: .nextNumber)
    }

    /// Adds `note`, or replaces the note with its id.
    public mutating func insert(_ note: Note) {
      if let old = notes[id: note.id], old.needsUpload { pending -= 1 }
      notes[id: note.id] = note
      if note.needsUpload { pending += 1 }
    }

    /// Changes note `id` in place; does nothing when there is no such note.
    public mutating func update(_ id: String, _ change: (inout Note) -> Void) {
      var delta = 0
      notes.modify(id: id) { note in
        let before = note.needsUpload
        change(&note)
        delta = (note.needsUpload ? 1 : 0) - (before ? 1 : 0)
      }
      pending += delta
    }

    @discardableResult
    public mutating func remove(id: String) -> Note? {
      guard let note = notes.remove(id: id) else { return nil }
      if note.needsUpload { pending -= 1 }
      return note
    }
  }

  /// The published state: the notes, and the sync with `pending` derived.
  public struct View: Codable, Equatable, Sendable {
    /// The sync as published, with `pending` derived.
    public struct Sync: Codable, Equatable, Sendable {
      /// What the sync is doing or how it ended.
      public var status: SyncState.Status
      /// Notes not yet confirmed by the server (`pendingUpload` or `failed`).
      public var pending: Int
      /// When a sync last completed with everything uploaded.
      public var lastSyncedAt: Date?
      public var message: String?
    }

    /// The notes, shared with the state (no copy).
    public var notes: IdentifiedArray<Note>
    public var sync: Sync
  }

  /// Which side of a conflict to keep.
  public enum Keep: String, CaseIterable, Codable, Sendable {
    case local, server
  }

  /// What a client may do with the notes, and the sync results the effect sends back.
  public enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    /// A new note, pending upload. Blank text is refused.
    case add(text: String)
    case edit(id: String, text: String)
    case delete(id: String)
    /// Uploads every pending note (and deletions), with bounded retries.
    case sync
    /// Ends a conflict by keeping the local text (uploaded next sync) or the server's.
    case resolveConflict(id: String, keep: Keep)
    /// Sent by the feature itself; a client's is refused (-32003).
    case `internal`(Internal)

    /// The results of the sync effect.
    public enum Internal: Codable, Equatable, Sendable {
      case uploaded(id: String, text: String, serverId: String, revision: Int)
      case conflicted(id: String, serverText: String, revision: Int)
      case uploadFailed(id: String)
      case deleteConfirmed(serverId: String)
      case wentOffline
      case syncFinished(failures: Int)
      /// The sync was cancelled (a client cancelled its request) before it finished.
      case syncCancelled
    }
  }
}

import FoundationEssentials
import JSON
import StateKit

/// Field Notes: offline-first notes that persist and sync with the server.
///
/// Every change is `pendingUpload` until the server confirms it. `sync` uploads pending notes
/// one by one with bounded retries and backoff; offline, it stops and leaves them pending; a
/// note whose server copy changed meanwhile becomes a `conflict` holding the server's text,
/// and nothing overwrites either side until the user resolves it.
public struct NotesFeature: Feature {
  public static let name = "notes"
  public static let isPersistent = true

  let backend: Backend
  let clock: any Clock<Duration>
  let wallClock: WallClock
  let backoff: Backoff

  /// Notes that sync with `backend`; retries wait on `clock`, timestamps read `wallClock`.
  public init(
    backend: Backend, clock: any Clock<Duration>, wallClock: WallClock = .system,
    backoff: Backoff = Backoff(base: .milliseconds(100), retries: 3)
  ) {
    self.backend = backend
    self.clock = clock
    self.wallClock = wallClock
    self.backoff = backoff
  }

  enum CancelID { case sync }

  /// A state saved mid-sync comes back idle, and only that (`State.differs(from:)`).
  public static func decodingChanged(_ state: State, from saved: JSON) -> Bool? {
    state.differs(from: saved)
  }

  /// The key of an upload of `note` from `baseRevision`: the same when the upload is retried
  /// after a crash lost its confirmation (the state then still holds the note as it was), so
  /// the server does not make a second copy.
  static func uploadKey(_ note: Note, baseRevision: Int?) -> String {
    "\(note.id)@\(WallClock.milliseconds(note.createdAt))#\(baseRevision ?? 0)"
  }

  static let offlineMessage = "You're offline. Notes will sync when you're back online."
  static let cancelledMessage = "Sync cancelled. The notes not uploaded yet are still pending."

  public var initialState: State { State() }

  /// Constant time whatever the number of notes: `notes` is shared, not copied, and
  /// `pending` is kept by the state.
  public func view(of state: State) -> View {
    View(
      notes: state.notes,
      sync: View.Sync(
        status: state.sync.status, pending: state.pending,
        lastSyncedAt: state.sync.lastSyncedAt, message: state.sync.message))
  }

  public func validate(_ action: Action) throws(ActionValidationError) {
    switch action {
    case .add(let text), .edit(_, let text):
      if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
        throw ActionValidationError(pointer: "/text", reason: "expected a non-blank text")
      }
    default:
      return
    }
  }

  public func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .add(let text):
      var id = "note-\(state.nextNumber)"
      // Wrapping, not trapping: nextNumber can come from a client's store/open state.
      while state.notes[id: id] != nil {
        state.nextNumber &+= 1
        id = "note-\(state.nextNumber)"
      }
      state.nextNumber &+= 1
      let now = wallClock.now()
      state.insert(Note(id: id, text: text, createdAt: now, updatedAt: now))
      return .none

    case .edit(let id, let text):
      guard let note = state.notes[id: id], note.text != text else { return .none }
      let now = wallClock.now()
      state.update(id) { note in
        note.text = text
        note.updatedAt = now
        // A conflict stays one until resolved: the edit is local work, the server's text kept.
        if note.syncStatus != .conflict { note.syncStatus = .pendingUpload }
      }
      return .none

    case .delete(let id):
      guard let note = state.remove(id: id) else { return .none }
      state.baseRevisions[id] = nil
      if let serverId = note.serverId { state.pendingDeletes.append(serverId) }
      return .none

    case .sync:
      guard state.sync.status != .syncing else { return .none }
      let uploads =
        state.pending == 0
        ? []
        : state.notes.filter(\.needsUpload).map { note in
          NoteUpload(
            id: note.id, serverId: note.serverId, text: note.text,
            baseRevision: state.baseRevisions[note.id],
            idempotencyKey: Self.uploadKey(note, baseRevision: state.baseRevisions[note.id]))
        }
      state.sync.status = .syncing
      state.sync.message = nil
      return syncEffect(uploads: uploads, deletes: state.pendingDeletes)
        .onCancel(.internal(.syncCancelled))
        .cancellable(id: CancelID.sync, cancelInFlight: true)

    case .resolveConflict(let id, let keep):
      guard state.notes[id: id]?.syncStatus == .conflict else { return .none }
      let now = wallClock.now()
      state.update(id) { note in
        // The base revision is already the server's, so keeping local overwrites it knowingly.
        if keep == .server {
          note.text = note.serverText ?? note.text
          note.syncStatus = .synchronized
        } else {
          note.syncStatus = .pendingUpload
        }
        note.serverText = nil
        note.updatedAt = now
      }
      return .none

    case .internal(.uploaded(let id, let text, let serverId, let revision)):
      guard state.notes[id: id] != nil else {
        // Deleted while it uploaded: the server now has a copy nobody wants.
        state.pendingDeletes.append(serverId)
        return .none
      }
      state.baseRevisions[id] = revision
      state.update(id) { note in
        note.serverId = serverId
        // Edited while uploading: the newer text is still pending (now based on this upload).
        if note.text == text && note.syncStatus != .conflict {
          note.syncStatus = .synchronized
          note.serverText = nil
        }
      }
      return .none

    case .internal(.conflicted(let id, let serverText, let revision)):
      guard state.notes[id: id] != nil else { return .none }
      state.baseRevisions[id] = revision
      state.update(id) { note in
        note.syncStatus = .conflict
        note.serverText = serverText
      }
      return .none

    case .internal(.uploadFailed(let id)):
      state.update(id) { note in
        if note.syncStatus == .pendingUpload { note.syncStatus = .failed }
      }
      return .none

    case .internal(.deleteConfirmed(let serverId)):
      state.pendingDeletes.removeAll { $0 == serverId }
      return .none

    case .internal(.wentOffline):
      state.sync.status = .offline
      state.sync.message = Self.offlineMessage
      return .none

    case .internal(.syncCancelled):
      // What was uploaded is confirmed note by note; the rest stays pending for the next sync.
      guard state.sync.status == .syncing else { return .none }
      state.sync.status = .idle
      state.sync.message = Self.cancelledMessage
      return .none

    case .internal(.syncFinished(let failures)):
      guard state.sync.status == .syncing else { return .none }
      if failures > 0 {
        state.sync.status = .failed
        state.sync.message =
          failures == 1
          ? "1 note could not be synced. Try again later."
          : "\(failures) notes could not be synced. Try again later."
      } else {
        state.sync = SyncState(status: .idle, lastSyncedAt: wallClock.now())
      }
      return .none
    }
  }

  /// Uploads one note at a time (the server sees edits in order), then deletes; stops at the
  /// first sign of being offline, leaving the rest pending. Reports its progress, one unit per
  /// upload or delete, so a client that asked sees `$/progress` as it goes.
  private func syncEffect(uploads: [NoteUpload], deletes: [String]) -> Effect<Action, Never> {
    .run { [backend, clock, backoff] send in
      let total = uploads.count + deletes.count
      var done = 0
      if total > 0 {
        await send.progress(
          done: 0, total: total, message: Self.progressMessage(done: 0, of: total))
      }
      // Nothing to send makes no request, but "synced just now" must not be claimed while
      // offline: the device knows its connectivity (as a phone's reachability API would).
      if uploads.isEmpty, deletes.isEmpty, await !backend.currentStatus.online {
        await send(.internal(.wentOffline))
        return
      }
      let retryNetwork: (BackendError) -> Bool = { $0 == .network }
      var failures = 0
      for upload in uploads {
        do {
          let receipt = try await backoff.run(clock: clock, retryingIf: retryNetwork) {
            try await backend.uploadNote(upload)
          }
          await send(
            .internal(
              .uploaded(
                id: upload.id, text: upload.text, serverId: receipt.serverId,
                revision: receipt.revision)))
        } catch BackendError.offline {
          await send(.internal(.wentOffline))
          return
        } catch BackendError.conflict(let serverText, let revision) {
          await send(
            .internal(.conflicted(id: upload.id, serverText: serverText, revision: revision)))
        } catch is BackendError {
          failures += 1
          await send(.internal(.uploadFailed(id: upload.id)))
        }
        done += 1
        await send.progress(
          done: done, total: total, message: Self.progressMessage(done: done, of: total))
      }
      for serverId in deletes {
        do {
          try await backoff.run(clock: clock, retryingIf: retryNetwork) {
            try await backend.deleteNote(serverId: serverId)
          }
          await send(.internal(.deleteConfirmed(serverId: serverId)))
        } catch BackendError.offline {
          await send(.internal(.wentOffline))
          return
        } catch is BackendError {
          failures += 1
        }
        done += 1
        await send.progress(
          done: done, total: total, message: Self.progressMessage(done: done, of: total))
      }
      await send(.internal(.syncFinished(failures: failures)))
    }
  }

  /// The line a progress report carries: "2 of 5 changes done" (an upload or a delete is done
  /// once the server answered it, whatever the answer: a conflict or a failure is done too).
  static func progressMessage(done: Int, of total: Int) -> String {
    "\(done) of \(total) \(total == 1 ? "change" : "changes") done"
  }
}

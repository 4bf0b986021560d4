/// A note as the client sends it for upload.
public struct NoteUpload: Equatable, Sendable {
  /// The client's note id.
  public var id: String
  /// `nil` for a note the server has never seen: the upload creates it.
  /// The server's id for the note (new for a first upload).
  public var serverId: String?
  /// The text to store.
  public var text: String
  /// The server revision the client's text was based on; `nil` for a new note.
  public var baseRevision: Int?
  /// The same for every retry of one upload, so the server answers a retry of an upload it
  /// already applied (its confirmation lost to a crash) with the same receipt, not a copy.
  public var idempotencyKey: String?

  /// An upload of note `id`.
  public init(
    id: String, serverId: String?, text: String, baseRevision: Int?,
    idempotencyKey: String? = nil
  ) {
    self.id = id
    self.serverId = serverId
    self.text = text
    self.baseRevision = baseRevision
    self.idempotencyKey = idempotencyKey
  }
}

/// The server's acknowledgement of an upload.
public struct NoteReceipt: Equatable, Sendable {
  public var serverId: String
  /// The server revision the upload created; the base of the next upload.
  public var revision: Int
}

/// The server's copies of notes, with a revision per note to detect concurrent edits.
struct NoteServer {
  struct Copy {
    var clientId: String
    var text: String
    var revision: Int
  }

  private var copies: [String: Copy] = [:]
  private var nextNumber = 1
  /// The receipt and text of each upload applied, by idempotency key.
  private var applied: [String: (receipt: NoteReceipt, text: String)] = [:]

  mutating func upload(_ upload: NoteUpload) throws(BackendError) -> NoteReceipt {
    var upload = upload
    if let key = upload.idempotencyKey, let earlier = applied[key] {
      // A retry: the same text gets the same receipt; a text edited since is an update of
      // the copy that upload made, not a new note.
      if earlier.text == upload.text { return earlier.receipt }
      upload.serverId = earlier.receipt.serverId
      upload.baseRevision = earlier.receipt.revision
    }
    let receipt = try apply(upload)
    if let key = upload.idempotencyKey { applied[key] = (receipt, upload.text) }
    return receipt
  }

  private mutating func apply(_ upload: NoteUpload) throws(BackendError) -> NoteReceipt {
    guard let serverId = upload.serverId else {
      let serverId = "srv-\(nextNumber)"
      nextNumber += 1
      copies[serverId] = Copy(clientId: upload.id, text: upload.text, revision: 1)
      return NoteReceipt(serverId: serverId, revision: 1)
    }
    guard var copy = copies[serverId] else {
      // Deleted on the server meanwhile: the client's edit brings it back.
      copies[serverId] = Copy(clientId: upload.id, text: upload.text, revision: 1)
      return NoteReceipt(serverId: serverId, revision: 1)
    }
    guard copy.revision == upload.baseRevision else {
      throw .conflict(serverText: copy.text, revision: copy.revision)
    }
    copy.text = upload.text
    copy.revision += 1
    copies[serverId] = copy
    return NoteReceipt(serverId: serverId, revision: copy.revision)
  }

  mutating func delete(serverId: String) {
    copies[serverId] = nil
  }

  mutating func edit(noteId: String, text: String) -> Bool {
    let serverId =
      copies[noteId] != nil ? noteId : copies.first { $0.value.clientId == noteId }?.key
    guard let serverId, var copy = copies[serverId] else { return false }
    copy.text = text
    copy.revision += 1
    copies[serverId] = copy
    return true
  }
}

/// How far a long effect has come: `done` units of `total` (nil when the total is not known),
/// and a line for a person. An effect reports it with ``Send/progress(done:total:message:)``.
///
/// ```swift
/// return .run { send in
///   for (index, note) in notes.enumerated() {
///     await send.progress(done: index, total: notes.count, message: "Uploading \(note.id)")
///     await send(.uploaded(try await api.upload(note)))
///   }
/// }
/// ```
public struct EffectProgress: Equatable, Sendable {
  public var done: Int
  public var total: Int?
  public var message: String?

  public init(done: Int, total: Int? = nil, message: String? = nil) {
    self.done = done
    self.total = total
    self.message = message
  }
}

/// One step of the progress of the effects an action started, as a watcher hears it
/// (``Store/observeProgress(of:_:)``): `begin` with the first report, `report` with each later
/// one, and `end` once every effect of the action has ended, finished or cancelled. A watcher
/// of an action whose effects never report hears that `end` alone (`done` 0).
public struct ProgressUpdate: Equatable, Sendable {
  /// Where the work stands.
  public enum Kind: String, Sendable {
    case begin, report, end
  }

  public var kind: Kind
  /// The report (for `end`, the last one, without its message).
  public var progress: EffectProgress
  /// For `end`: whether an effect of the action was cancelled before it finished (a client's
  /// `$/cancelRequest`, `.cancel(id:)`, a closed store).
  public var cancelled: Bool

  public init(_ kind: Kind, _ progress: EffectProgress, cancelled: Bool = false) {
    self.kind = kind
    self.progress = progress
    self.cancelled = cancelled
  }

  /// `begin` with `done`, `total` and `message`.
  public static func begin(done: Int, total: Int? = nil, message: String? = nil) -> Self {
    Self(.begin, EffectProgress(done: done, total: total, message: message))
  }

  /// `report` with `done`, `total` and `message`.
  public static func report(done: Int, total: Int? = nil, message: String? = nil) -> Self {
    Self(.report, EffectProgress(done: done, total: total, message: message))
  }

  /// `end` after the last report's `done` and `total`.
  public static func end(done: Int, total: Int? = nil, cancelled: Bool = false) -> Self {
    Self(.end, EffectProgress(done: done, total: total), cancelled: cancelled)
  }
}

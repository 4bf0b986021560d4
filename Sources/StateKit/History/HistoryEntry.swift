import JSON

/// One reduced action (or a rewind, or events an effect emitted) as a store's history keeps
/// it: what `history/get` shows and `--record` writes.
public struct HistoryEntry: Sendable {
  /// What made the entry.
  public enum Kind: Sendable, Equatable {
    /// An action was reduced.
    case action
    /// An effect emitted events outside any reduce.
    case events
    /// `store/rewind` made the state at `version` current again.
    case rewind(to: UInt64)
    /// `history/skip` turned entry `entry` off (`skipped`) or on again, and the state was
    /// recomputed from the actions that remain (StoreBranching.swift).
    case skip(entry: UInt64, skipped: Bool)
  }

  /// Where an action came from: the client's request (`cause`, the request id carried
  /// through every effect it set off) and, for an action sent by an effect, the entry of the
  /// action whose effect sent it. Both nil: the server itself sent it.
  public struct Origin: Sendable, Equatable {
    public var request: JSON?
    public var action: UInt64?

    public init(request: JSON?, action: UInt64?) {
      self.request = request
      self.action = action
    }
  }

  public var store: String
  /// The entry's number in its store, from 1, never reused: what `origin.action` names.
  public var seq: UInt64
  public var kind: Kind
  /// The store's version after the entry.
  public var version: UInt64
  /// Encodes the action to its wire form on demand (nil when the entry is no action), so
  /// nothing is encoded on the hot path for a history nobody reads.
  public var action: @Sendable () -> JSON?
  public var origin: Origin
  /// The view patch published, and the events emitted.
  public var patch: [JSON]
  public var events: [JSON]
  /// The reduce's time stamp (`ReduceTime`), milliseconds since the epoch.
  public var at: Int64
  /// How long reduce plus publish took.
  public var duration: Duration
  /// The effects this action started, as far as history has seen them.
  public var effects: [EffectLife]
  /// Whether `history/skip` turned this action off: the current state is computed without it.
  public var skipped: Bool

  public init(
    store: String, seq: UInt64, kind: Kind, version: UInt64,
    action: @escaping @Sendable () -> JSON?, origin: Origin, patch: [JSON], events: [JSON],
    at: Int64, duration: Duration, effects: [EffectLife] = [], skipped: Bool = false
  ) {
    self.store = store
    self.seq = seq
    self.kind = kind
    self.version = version
    self.action = action
    self.origin = origin
    self.patch = patch
    self.events = events
    self.at = at
    self.duration = duration
    self.effects = effects
    self.skipped = skipped
  }
}

/// The life of one effect task: started by the action of entry `action`, then finished,
/// cancelled or failed after `duration`.
public struct EffectLife: Sendable, Equatable {
  public enum Status: String, Sendable {
    case running, finished, cancelled, failed
  }
  /// The effect's number in its store.
  public var effect: UInt64
  /// `run`, `debounce` or `concatenate`: which kind of effect the task carries out.
  public var kind: String
  /// The entry (`seq`) of the action that started it; nil for an action history did not see.
  public var action: UInt64?
  public var status: Status
  /// When it started, milliseconds since the epoch.
  public var startedAt: Int64
  /// How long it ran; zero while running.
  public var duration: Duration

  public init(
    effect: UInt64, kind: String, action: UInt64?, status: Status, startedAt: Int64,
    duration: Duration
  ) {
    self.effect = effect
    self.kind = kind
    self.action = action
    self.status = status
    self.startedAt = startedAt
    self.duration = duration
  }
}

/// What a store with history reports as it happens: to the server's log and recording.
public enum HistoryRecord: Sendable {
  case entry(HistoryEntry)
  /// An effect started (`status` running) or ended.
  case effect(store: String, EffectLife)
}

/// Why a past state cannot be produced.
public enum HistoryError: Error, Equatable, Sendable {
  /// The store keeps no history (`--history 0`).
  case off
  /// The version is older than the oldest one history still holds (`oldest`).
  case evicted(oldest: UInt64)
  /// The version is newer than the store's current one.
  case future(current: UInt64)
}

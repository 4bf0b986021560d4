/// How the server runs: limits, logging and where persistent stores live. Filled from the
/// command line by ``CommandLineInterface``; every member has the documented default.
public struct ServerOptions: Sendable {
  /// Keep every store in memory only; nothing is read from or written to `stateDirectory`.
  public var ephemeral = false
  /// Where persistent stores' snapshots live; `nil` means the platform default
  /// (`$XDG_STATE_HOME/stateserver`, else `~/.local/state/stateserver`).
  public var stateDirectory: String?
  public var logLevel = Log.Level.warning
  public var logFormat = Log.Format.text
  /// A longer input line is skipped without being held in memory and answered `-32600`.
  public var maxMessageBytes = 16 << 20
  /// How long effects in flight may run once shutdown begins before they are cancelled.
  public var drainTimeout = Duration.seconds(2)
  /// Queued responses and events (not patches, which merge) past which reading stdin pauses
  /// until the client reads: the bound on the server's memory when the client stops reading.
  public var maxQueuedMessages = 4096
  /// Entries of history kept per store (`--history`); 0 keeps none.
  public var historyLimit = 1000
  /// Where `--record` appends every store's history; nil records nothing.
  public var recordPath: String?
  /// `--listen`: where other clients of the same user attach; nil serves stdio alone.
  public var listen: ListenAddress?

  public init() {}

  public var log: Log { Log(level: logLevel, format: logFormat) }
}

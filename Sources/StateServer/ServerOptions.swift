/// How the server runs: limits, logging and where persistent stores live. Filled from the
/// command line by ``CommandLineInterface``; every member has the documented default.
public struct ServerOptions: Sendable {
  /// The application's name, as `initialize`, `rpc.discover` and a `--record` header report it.
  public var name = "stateserver"
  /// The application's version, as `initialize`, `rpc.discover` and a `--record` header
  /// report it.
  public var version = Server.version
  /// Keep every store in memory only; nothing is read from or written to `stateDirectory`.
  public var ephemeral = false
  /// Where persistent stores' snapshots live; `nil` means the platform default
  /// (`$XDG_STATE_HOME/stateserver`, else `~/.local/state/stateserver`).
  public var stateDirectory: String?
  public var logLevel = Log.Level.warning
  public var logFormat = Log.Format.text
  /// A longer input line is skipped without being held in memory and answered `-32600`.
  public var maxMessageBytes = 16 << 20
  /// The largest `maxMessageBytes` the command line accepts (1 GiB).
  public static let maximumMessageBytesLimit = 1 << 30
  /// How long effects in flight may run once shutdown begins before they are cancelled.
  public var drainTimeout = Duration.seconds(2)
  /// Queued responses and events (not patches, which merge) past which reading stdin pauses
  /// until the client reads: the bound on the server's memory when the client stops reading.
  public var maxQueuedMessages = 4096
  /// `--listen`: where other clients of the same user attach; nil serves stdio alone.
  public var listen: ListenAddress?
  /// Entries of history kept per store (`--history`); 0 keeps none.
  public var historyLimit = 1000
  /// Where `--record` appends every store's history; nil records nothing.
  public var recordPath: String?
  /// Estimated bytes of output not yet written past which the server stops reading stdin and
  /// serving what it has read, until the client reads: the bound on output memory (32 MiB),
  /// whatever one line or one batch asks for.
  public var maxQueuedOutputBytes = 32 << 20
  /// Bytes of input read and not yet served past which reading pauses (8 MiB; one line of up
  /// to `maxMessageBytes` is always taken).
  public var maxQueuedInputBytes = 8 << 20

  /// The clock effects sleep on (`--clock`): real time, or virtual time moved by
  /// `clock/advance`. One instance, shared by every copy of the options and the features.
  public var clock = ServerClock()

  public init() {}

  public var log: Log { Log(level: logLevel, format: logFormat) }
}

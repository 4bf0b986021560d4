/// A persistent store's saved state as one database row: what a restart resumes from.
public struct Snapshot: Equatable, Sendable {
  /// The store's id (`notes` for the default store of the `notes` feature).
  public var store: String
  /// The feature the state belongs to.
  public var feature: String
  /// The feature's `schemaVersion` when the state was written.
  public var schemaVersion: Int
  /// The store's version, so a restart resumes at the same number.
  public var version: UInt64
  /// The private state, encoded as JSON text.
  public var state: String

  /// A snapshot row.
  public init(store: String, feature: String, schemaVersion: Int, version: UInt64, state: String) {
    self.store = store
    self.feature = feature
    self.schemaVersion = schemaVersion
    self.version = version
    self.state = state
  }
}

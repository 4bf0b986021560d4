import JSON

/// A registered feature with its type erased: what `features/list`, `rpc.discover` and
/// `store/open` need. Made by `Feature.descriptor()`.
public struct FeatureDescriptor: Sendable {
  public var name: String
  public var publicActions: [String]
  public var eventNames: [String]
  public var isPersistent: Bool
  public var schemaVersion: Int
  /// JSON Schemas (2020-12) of the published view, of each public action and of each event,
  /// derived from the Swift types.
  public var viewSchema: JSON
  public var actionSchemas: [String: JSON]
  public var eventSchemas: [String: JSON]
  /// Makes a store. `initial` is an RFC 7396 merge patch over the feature's initial state;
  /// `restoring` a persisted snapshot (private state and version). Throws `ActionError.invalid`
  /// when either does not decode.
  public var makeStore:
    @MainActor @Sendable (
      _ id: String, _ initial: JSON?, _ restoring: (state: JSON, version: UInt64)?
    )
      throws(ActionError) -> any AnyStore

  public init(
    name: String, publicActions: [String], eventNames: [String], isPersistent: Bool,
    schemaVersion: Int, viewSchema: JSON, actionSchemas: [String: JSON],
    eventSchemas: [String: JSON],
    makeStore:
      @escaping @MainActor @Sendable (String, JSON?, (state: JSON, version: UInt64)?)
      throws(ActionError) -> any AnyStore
  ) {
    self.name = name
    self.publicActions = publicActions
    self.eventNames = eventNames
    self.isPersistent = isPersistent
    self.schemaVersion = schemaVersion
    self.viewSchema = viewSchema
    self.actionSchemas = actionSchemas
    self.eventSchemas = eventSchemas
    self.makeStore = makeStore
  }
}

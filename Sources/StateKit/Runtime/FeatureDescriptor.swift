import JSON
import Synchronization

/// A registered feature with its type erased: what `features/list`, `rpc.discover` and
/// `store/open` need. Made by `Feature.descriptor()`.
///
/// The schemas are derived on first use (`features/list`, `rpc.discover`), not at
/// registration: probing every feature's types was about a quarter of the server's start-up.
public struct FeatureDescriptor: Sendable {
  public var name: String
  /// The wire names of the actions a client may send (``Feature/caseNames``).
  public var publicActions: [String]
  /// The wire names of the events.
  public var eventNames: [String]
  /// What makes the feature's action or event names ambiguous or unreadable
  /// (``FeatureCaseNames/problems``): the server refuses to start with a feature that has any.
  public var caseNameProblems: [SchemaProblem]
  public var isPersistent: Bool
  public var schemaVersion: Int
  /// The other stores the feature reads (``Feature/dependencies``), for the server to bind.
  public var dependencies: [SharedDependency] = []
  /// JSON Schema (2020-12) of the published view, derived from the Swift types.
  public var viewSchema: JSON {
    get { schemas.value.view }
    set { schemas = SchemaCell(resolved: schemas.value.replacing(view: newValue)) }
  }
  /// JSON Schemas of each public action, by name.
  public var actionSchemas: [String: JSON] {
    get { schemas.value.actions }
    set { schemas = SchemaCell(resolved: schemas.value.replacing(actions: newValue)) }
  }
  /// JSON Schemas of each event, by name.
  public var eventSchemas: [String: JSON] {
    get { schemas.value.events }
    set { schemas = SchemaCell(resolved: schemas.value.replacing(events: newValue)) }
  }
  /// What the schemas could not describe (each `{}` there), after the ``caseNameProblems``:
  /// empty for a complete feature. A feature's tests assert it, and `stateserver codegen`
  /// refuses a feature with problems.
  public var schemaProblems: [SchemaProblem] { caseNameProblems + schemas.value.problems }
  /// Makes a store. `initial` is an RFC 7396 merge patch over the feature's initial state;
  /// `restoring` a persisted snapshot (private state and version). Throws `ActionError.invalid`
  /// when either does not decode.
  public var makeStore:
    @StateActor @Sendable (
      _ id: String, _ initial: consuming JSON?,
      _ restoring: consuming (state: JSON, version: UInt64)?
    )
      throws(ActionError) -> any AnyStore

  private var schemas: SchemaCell

  /// A descriptor with its schemas given.
  public init(
    name: String, publicActions: [String], eventNames: [String],
    caseNameProblems: [SchemaProblem] = [], isPersistent: Bool,
    schemaVersion: Int, viewSchema: JSON, actionSchemas: [String: JSON],
    eventSchemas: [String: JSON],
    makeStore:
      @escaping @StateActor @Sendable (
        String, consuming JSON?, consuming (state: JSON, version: UInt64)?
      )
      throws(ActionError) -> any AnyStore
  ) {
    self.init(
      name: name, publicActions: publicActions, eventNames: eventNames,
      caseNameProblems: caseNameProblems, isPersistent: isPersistent,
      schemaVersion: schemaVersion,
      schemas: SchemaCell(
        resolved: FeatureSchemas(
          view: viewSchema, actions: actionSchemas, events: eventSchemas, problems: [])),
      makeStore: makeStore)
  }

  /// A descriptor whose schemas `derive` computes on first use (once, for every copy).
  init(
    name: String, publicActions: [String], eventNames: [String],
    caseNameProblems: [SchemaProblem], isPersistent: Bool,
    schemaVersion: Int, deriveSchemas derive: @escaping @Sendable () -> FeatureSchemas,
    makeStore:
      @escaping @StateActor @Sendable (
        String, consuming JSON?, consuming (state: JSON, version: UInt64)?
      )
      throws(ActionError) -> any AnyStore
  ) {
    self.init(
      name: name, publicActions: publicActions, eventNames: eventNames,
      caseNameProblems: caseNameProblems, isPersistent: isPersistent,
      schemaVersion: schemaVersion, schemas: SchemaCell(derive: derive), makeStore: makeStore)
  }

  /// The one place the stored properties are set; the two above differ only in `schemas`.
  private init(
    name: String, publicActions: [String], eventNames: [String],
    caseNameProblems: [SchemaProblem], isPersistent: Bool, schemaVersion: Int,
    schemas: SchemaCell,
    makeStore:
      @escaping @StateActor @Sendable (
        String, consuming JSON?, consuming (state: JSON, version: UInt64)?
      )
      throws(ActionError) -> any AnyStore
  ) {
    self.name = name
    self.publicActions = publicActions
    self.eventNames = eventNames
    self.caseNameProblems = caseNameProblems
    self.isPersistent = isPersistent
    self.schemaVersion = schemaVersion
    self.schemas = schemas
    self.makeStore = makeStore
  }
}

/// The three kinds of schema of a feature.
struct FeatureSchemas: Sendable {
  var view: JSON
  var actions: [String: JSON]
  var events: [String: JSON]
  var problems: [SchemaProblem]

  func replacing(
    view: JSON? = nil, actions: [String: JSON]? = nil, events: [String: JSON]? = nil
  ) -> FeatureSchemas {
    FeatureSchemas(
      view: view ?? self.view, actions: actions ?? self.actions, events: events ?? self.events,
      problems: problems)
  }
}

/// Schemas derived once, on first read, shared by every copy of a descriptor. A `Mutex`
/// makes the first read safe from any thread (descriptors are `Sendable`).
private final class SchemaCell: Sendable {
  private enum Content {
    case pending(@Sendable () -> FeatureSchemas)
    case resolved(FeatureSchemas)
  }
  private let content: Mutex<Content>

  init(resolved: FeatureSchemas) { content = Mutex(.resolved(resolved)) }
  init(derive: @escaping @Sendable () -> FeatureSchemas) { content = Mutex(.pending(derive)) }

  var value: FeatureSchemas {
    content.withLock { content in
      switch content {
      case .resolved(let schemas):
        return schemas
      case .pending(let derive):
        let schemas = derive()
        content = .resolved(schemas)
        return schemas
      }
    }
  }
}

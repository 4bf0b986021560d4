import Synchronization

/// The wire names of a feature's actions and events, read from its `Action` and `Event` types
/// (``CaseList``): nothing to keep in step by hand.
public struct FeatureCaseNames: Equatable, Sendable {
  /// The actions a client may send: every case of `Action` but `internal`, in declaration
  /// order. `features/list` advertises them; any other name is refused with -32003.
  public var publicActions: [String]
  /// The cases of `Action.Internal` (``EmbedsInternalActions``): sent only by the feature.
  public var internalActions: [String]
  /// The cases of `Event`.
  public var events: [String]
  /// What makes the names ambiguous or unreadable, each with its pointer (`/actions/saved`)
  /// and what to change: empty for a well-formed feature. The server refuses to start with a
  /// feature that has any, and `TestStore` fails every test of it.
  public var problems: [SchemaProblem]
}

extension Feature {
  /// The wire names of this feature's actions and events, read from its types once.
  public static var caseNames: FeatureCaseNames {
    CaseNameCache.shared.names(of: Self.self)
  }

  /// The problems of ``caseNames``, each reason naming the feature and the case.
  public static var caseNameProblems: [SchemaProblem] { caseNames.problems }

  static func readCaseNames() -> FeatureCaseNames {
    var problems: [SchemaProblem] = []
    let unreadable = { (type: Any.Type, pointer: String) in
      SchemaProblem(
        pointer: pointer,
        reason:
          "feature \(name): the cases of \(type) cannot be read from its type: give it the "
          + "Codable that Swift synthesizes for an enum (no init(from:) of its own)")
    }
    let actions = CaseList.names(of: Action.self)
    if actions == nil { problems.append(unreadable(Action.self, "/actions")) }
    var publicActions = actions ?? []
    var internalActions: [String] = []
    if let embedding = _internalActionsEmbedding {
      internalActions = internalCases(of: embedding, public: &publicActions, &problems)
    } else if publicActions.contains(internalCaseName) {
      problems.append(
        SchemaProblem(
          pointer: "/actions/internal",
          reason:
            "feature \(name): \(Action.self) has a case `internal` but does not conform to "
            + "EmbedsInternalActions, so clients could send it: add the conformance"))
    }
    let events = CaseList.names(of: Event.self)
    if events == nil { problems.append(unreadable(Event.self, "/events")) }
    return FeatureCaseNames(
      publicActions: publicActions, internalActions: internalActions, events: events ?? [],
      problems: problems)
  }

  /// The cases of `Internal`, with `internal` taken out of the public names; a name on both
  /// sides would make the flat wire form mean two actions.
  private static func internalCases<Embedding: EmbedsInternalActions>(
    of embedding: Embedding.Type, public publicActions: inout [String],
    _ problems: inout [SchemaProblem]
  ) -> [String] {
    guard let position = publicActions.firstIndex(of: internalCaseName) else {
      problems.append(
        SchemaProblem(
          pointer: "/actions/internal",
          reason:
            "feature \(name): \(Action.self) conforms to EmbedsInternalActions without a case "
            + "`internal(Internal)`: declare `case internal(Internal)`"))
      return []
    }
    publicActions.remove(at: position)
    guard let internalActions = CaseList.names(of: Embedding.Internal.self) else {
      problems.append(
        SchemaProblem(
          pointer: "/actions/internal",
          reason:
            "feature \(name): the cases of \(Embedding.Internal.self) cannot be read from its "
            + "type: give it the Codable that Swift synthesizes for an enum"))
      return []
    }
    for name in internalActions where publicActions.contains(name) {
      problems.append(
        SchemaProblem(
          pointer: "/actions/" + WireFormat.escaped(name),
          reason:
            "feature \(Self.name): \"\(name)\" is both a case of \(Action.self) and of "
            + "\(Embedding.Internal.self); on the wire one name must mean one action: "
            + "rename one of them"))
    }
    return internalActions
  }
}

/// The names read once per feature type: `Store.init` and `ChildAction` ask on every store
/// and every decode.
private final class CaseNameCache: Sendable {
  static let shared = CaseNameCache()
  private let names = Mutex<[ObjectIdentifier: FeatureCaseNames]>([:])

  func names<F: Feature>(of feature: F.Type) -> FeatureCaseNames {
    let key = ObjectIdentifier(F.self)
    if let known = names.withLock({ $0[key] }) { return known }
    // Read outside the lock: reading decodes nothing of the feature's, but keeps the lock
    // free of foreign code. Two threads may both read; they find the same names.
    let read = F.readCaseNames()
    names.withLock { $0[key] = read }
    return read
  }
}

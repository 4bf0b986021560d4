import JSON

extension Feature {
  /// This feature with its types erased, for registration with the server: names, schemas
  /// derived from the Swift types, and a factory of stores sharing this feature's
  /// dependencies.
  ///
  /// ```swift
  /// server.register(Counter().descriptor())
  /// ```
  public func descriptor() -> FeatureDescriptor {
    let names = Self.caseNames
    var descriptor = FeatureDescriptor(
      name: Self.name,
      publicActions: names.publicActions,
      eventNames: names.events,
      caseNameProblems: names.problems,
      isPersistent: Self.isPersistent,
      schemaVersion: Self.schemaVersion,
      deriveSchemas: {
        var problems: [SchemaProblem] = []
        // The initial view guides the probe through enums, whose cases it cannot list.
        let view = SchemaProbe.schema(
          of: View.self, sample: try? JSONValueEncoder().encode(view(of: initialState)),
          writer: .server, pointer: "/state", problems: &problems)
        let actions = SchemaProbe.caseSchemas(
          of: Action.self, cases: names.publicActions, writer: .client, pointer: "/actions",
          problems: &problems)
        let events = SchemaProbe.caseSchemas(
          of: Event.self, cases: names.events, writer: .server, pointer: "/events",
          problems: &problems)
        return FeatureSchemas(view: view, actions: actions, events: events, problems: problems)
      },
      makeStore: { id, initial, restoring throws(ActionError) in
        try Store(
          feature: self, id: id, initial: consume initial, restoring: consume restoring)
      })
    descriptor.dependencies = dependencies.filter(\.readsAStore)
    return descriptor
  }
}

extension Feature {
  /// The JSON Schema of the actions a client may send, a `oneOf` discriminated by `type`:
  /// what a type embedding this feature's actions (``SchemaDescribing``) describes itself with.
  public static func publicActionSchema() throws(SchemaProblem) -> JSON {
    var problems = caseNames.problems
    let schemas = SchemaProbe.caseSchemas(
      of: Action.self, cases: caseNames.publicActions, writer: .client, problems: &problems)
    if let first = problems.first { throw first }
    return ["oneOf": .array(caseNames.publicActions.compactMap { schemas[$0] })]
  }
}

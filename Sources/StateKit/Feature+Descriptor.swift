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
    FeatureDescriptor(
      name: Self.name,
      publicActions: Self.publicActions,
      eventNames: Self.eventNames,
      isPersistent: Self.isPersistent,
      schemaVersion: Self.schemaVersion,
      deriveSchemas: {
        FeatureSchemas(
          // The initial view guides the probe through enums, whose cases it cannot list.
          view: SchemaProbe.schema(
            of: View.self, sample: try? JSONValueEncoder().encode(view(of: initialState))),
          actions: SchemaProbe.caseSchemas(of: Action.self, cases: Self.publicActions),
          events: SchemaProbe.caseSchemas(of: Event.self, cases: Self.eventNames))
      },
      makeStore: { id, initial, restoring throws(ActionError) in
        try Store(feature: self, id: id, initial: initial, restoring: restoring)
      })
  }
}

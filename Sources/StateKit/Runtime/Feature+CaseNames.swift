extension Feature {
  /// The entries of `publicActions` and `eventNames` that name no case of `Action` or `Event`
  /// (a typo such as `"strat"`, or a case renamed in the enum but not in the list), each with
  /// its pointer: empty when the lists match the enums. Such a name compiles, is advertised by
  /// `features/list`, and the case it meant is refused with -32003; `TestStore` fails on any,
  /// so every feature test checks its lists against its types.
  public static var caseNameProblems: [SchemaProblem] {
    SchemaProbe.unknownCases(of: Action.self, among: publicActions).map {
      SchemaProblem(
        pointer: "/publicActions/" + WireFormat.escaped($0),
        reason: "\"\($0)\" names no case of \(Action.self) (a case's wire name is its Swift name)")
    }
      + SchemaProbe.unknownCases(of: Event.self, among: eventNames).map {
        SchemaProblem(
          pointer: "/eventNames/" + WireFormat.escaped($0),
          reason: "\"\($0)\" names no case of \(Event.self) (a case's wire name is its Swift name)")
      }
  }
}

extension SchemaProbe {
  /// The names among `cases` that are not cases of `type`, by the same probe that derives the
  /// case schemas (a case whose payload cannot be described still counts as a case).
  static func unknownCases<T: Decodable>(of type: T.Type, among cases: [String]) -> [String] {
    var problems: [SchemaProblem] = []
    _ = caseSchemas(of: type, cases: cases, writer: .client, problems: &problems)
    return cases.filter { name in
      problems.contains {
        $0.pointer == "/" + WireFormat.escaped(name)
          && $0.reason == "\"\(name)\" is not a case of \(T.self)"
      }
    }
  }
}

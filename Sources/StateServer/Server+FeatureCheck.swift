import StateKit

extension Server {
  /// Why `features` cannot be served, one line per problem, each naming the feature and the
  /// case (`todos: /actions/saved: ...`); `nil` when every feature's action and event names
  /// are well-formed (``FeatureDescriptor/caseNameProblems``). Served anyway, such a feature
  /// would advertise a name that means two actions, or let clients send internal ones.
  static func refusal(of features: [FeatureDescriptor]) -> String? {
    let lines = features.flatMap { feature in
      feature.caseNameProblems.map { "feature \(feature.name) refused: \($0)" }
    }
    return lines.isEmpty ? nil : lines.joined(separator: "\n")
  }
}

import JSON
import StateKit
import Testing

/// The wire names of actions and events come from the types; a declaration whose names would
/// be ambiguous or unreadable is a problem that names the feature and the case.
@Suite struct CaseNameTests {
  @Test func theNamesAreTheCasesInDeclarationOrderAndInternalOnesAreApart() {
    #expect(Counter.caseNames.publicActions == ["increment", "decrement", "set", "noop"])
    #expect(Counter.caseNames.internalActions == ["reset"])
    #expect(Counter.caseNames.events == ["milestone"])
    #expect(Counter.caseNameProblems == [])
    #expect(Loader.caseNames.publicActions == ["load", "refresh"])
    #expect(Loader.caseNames.internalActions == ["loaded", "retrying", "failed"])
    #expect(Loader.caseNames.events == [])
    // A child's actions embedded as a whole are one public case of the parent.
    #expect(Board.caseNames.publicActions == ["add", "remove", "ticker", "counter", "rebuild"])
    #expect(Board.caseNames.events == ["counter"])
  }

  @Test func customCodingKeysAreTheWireNames() {
    #expect(Renamed.caseNames.publicActions == ["start-timer", "stop"])
  }

  @Test func anInternalCaseNamedLikeAPublicOneIsRefusedByNameAndCase() {
    let problems = Clash.caseNameProblems
    #expect(problems.map(\.pointer) == ["/actions/save"])
    #expect(problems.first?.reason.contains("feature clash") == true)
    #expect(problems.first?.reason.contains("\"save\" is both a case of") == true)
    #expect(Clash().descriptor().caseNameProblems == problems)
    #expect(Clash().descriptor().schemaProblems.map(\.pointer).first == "/actions/save")
  }

  @Test func anInternalCaseWithoutTheConformanceIsRefused() {
    // Without `EmbedsInternalActions`, `internal` would be a public action carrying the rest.
    #expect(Unmarked.caseNameProblems.map(\.pointer) == ["/actions/internal"])
    #expect(
      Unmarked.caseNameProblems.first?.reason.contains("does not conform to EmbedsInternalActions")
        == true)
  }

  @Test func anEnumWithCodingOfItsOwnIsRefusedForItsUnreadableCases() {
    #expect(HandCoded.caseNameProblems.map(\.pointer) == ["/actions"])
    #expect(HandCoded.caseNameProblems.first?.reason.contains("feature hand-coded") == true)
  }

  @Test func anInternalActionIsFlatOnTheWireAndDecodesOnlyUnchecked() throws {
    #expect(try WireFormat.encode(Counter.Action.internal(.reset)) == ["type": "reset"])
    #expect(try WireFormat.encode(Counter.Action.set(value: 2)) == ["type": "set", "value": 2])
    #expect(
      try WireFormat.decode(Counter.Action.self, from: ["type": "reset"]) == .internal(.reset))
    #expect(
      try WireFormat.decode(Loader.Action.self, from: ["type": "retrying", "attempt": 2])
        == .internal(.retrying(attempt: 2)))
    // A field of an internal action is pointed at as a public one's is.
    #expect(
      throws: ActionError.invalid(
        pointer: "/attempt", reason: "expected an integer, found a string")
    ) {
      try WireFormat.decode(Loader.Action.self, from: ["type": "retrying", "attempt": "x"])
    }
    #expect {
      try WireFormat.decode(Loader.Action.self, from: ["type": "nothing"])
    } throws: { error in
      if case .refused(let type, _) = error as? ActionError { return type == "nothing" }
      return false
    }
    // The case that carries them is no action of its own.
    #expect {
      try WireFormat.decodeAction(
        Loader.Action.self, from: ["type": "internal"],
        allowed: Set(Loader.caseNames.publicActions))
    } throws: { error in
      if case .refused(let type, _) = error as? ActionError { return type == "internal" }
      return false
    }
  }
}

// Declarations a feature author could get wrong, each refused with a reason.

private struct Nothing: Codable, Equatable, Sendable {}

private struct Renamed: Feature {
  enum Action: Codable, Sendable {
    case start
    case stop
    enum CodingKeys: String, CodingKey {
      case start = "start-timer"
      case stop
    }
  }
  static let name = "renamed"
  var initialState: Nothing { Nothing() }
  func reduce(into state: inout Nothing, action: Action) -> Effect<Action, Never> { .none }
}

private struct Clash: Feature {
  enum Action: Codable, Sendable, EmbedsInternalActions {
    case save
    case `internal`(Internal)
    enum Internal: Codable, Sendable { case save, saved }
  }
  static let name = "clash"
  var initialState: Nothing { Nothing() }
  func reduce(into state: inout Nothing, action: Action) -> Effect<Action, Never> { .none }
}

private struct Unmarked: Feature {
  enum Action: Codable, Sendable {
    case save
    case `internal`(Internal)
    enum Internal: Codable, Sendable { case saved }
  }
  static let name = "unmarked"
  var initialState: Nothing { Nothing() }
  func reduce(into state: inout Nothing, action: Action) -> Effect<Action, Never> { .none }
}

private struct HandCoded: Feature {
  /// Decoded from a string: no keyed container names its cases.
  enum Action: Codable, Sendable {
    case go
    init(from decoder: any Decoder) throws {
      _ = try decoder.singleValueContainer().decode(String.self)
      self = .go
    }
    func encode(to encoder: any Encoder) throws {
      var container = encoder.singleValueContainer()
      try container.encode("go")
    }
  }
  static let name = "hand-coded"
  var initialState: Nothing { Nothing() }
  func reduce(into state: inout Nothing, action: Action) -> Effect<Action, Never> { .none }
}

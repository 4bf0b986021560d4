import StateKit
import Testing

/// Name lists that drift from their enums are found, with their pointers.
@Suite struct CaseNameTests {
  struct Typo: Feature {
    struct State: Codable, Equatable, Sendable {}
    enum Action: Codable, Equatable, Sendable {
      case start
      case rename(name: String)
    }
    enum Event: Codable, Equatable, Sendable {
      case finished(count: Int)
    }
    static let name = "typo"
    static let publicActions = ["strat", "rename"]
    static let eventNames = ["finished", "done"]
    var initialState: State { State() }
    func reduce(into state: inout State, action: Action) -> Effect<Action, Event> { .none }
  }

  @Test func aNameThatIsNoCaseIsAProblemWithItsPointer() {
    #expect(Typo.caseNameProblems.map(\.pointer) == ["/publicActions/strat", "/eventNames/done"])
    #expect(Typo.caseNameProblems.first?.reason.contains("names no case of Action") == true)
  }

  @Test func listsThatMatchTheirEnumsHaveNone() {
    #expect(Counter.caseNameProblems == [])
    #expect(Board.caseNameProblems == [])
    #expect(Loader.caseNameProblems == [])
  }
}

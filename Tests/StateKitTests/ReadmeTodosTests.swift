// The feature written from scratch in docs/guide/writing-a-feature.md, verbatim, with its tests:
// if this file stops compiling or passing, the guide is wrong (tests/test_readme.py checks that
// the guide's code and this file's agree).
import StateKit
import StateKitTesting
import Testing

/// Saves todos to a server; the guide's example dependency.
actor TodoAPI {
  private(set) var saved: [String] = []
  func save(_ title: String) async throws { saved.append(title) }
}

struct Todos: Feature {
  struct Todo: Codable, Equatable, Sendable, Identifiable {
    var id: Int
    var title: String
    var done = false
  }

  struct State: Codable, Equatable, Sendable {
    var todos: IdentifiedArray<Todo> = []
    var nextID = 1
    var saving = false
  }

  enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    case add(title: String)
    case toggle(id: Int)
    case `internal`(Internal)
    /// Only the effect below sends it.
    enum Internal: Codable, Equatable, Sendable { case saved }
  }

  enum Event: Codable, Equatable, Sendable {
    case toast(message: String)
  }

  static let name = "todos"

  let api: TodoAPI

  var initialState: State { State() }

  func validate(_ action: Action) throws(ActionValidationError) {
    if case .add(let title) = action, title.allSatisfy(\.isWhitespace) {
      throw ActionValidationError(pointer: "/title", reason: "expected a non-blank title")
    }
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
    switch action {
    case .add(let title):
      state.todos.append(Todo(id: state.nextID, title: title))
      state.nextID += 1
      state.saving = true
      return .run { [api] send in
        try await api.save(title)
        await send(.internal(.saved))
      }
    case .toggle(let id):
      state.todos.modify(id: id) { $0.done.toggle() }
      return .none
    case .internal(.saved):
      state.saving = false
      return .emit(.toast(message: "Saved"))
    }
  }
}

@StateActor
@Suite struct ReadmeTodosTests {
  @Test func addingSavesThroughTheAPIAndToasts() async throws {
    let api = TodoAPI()
    let store = TestStore(feature: Todos(api: api))
    await store.send(.add(title: "Write the README")) {
      $0.todos.append(Todos.Todo(id: 1, title: "Write the README"))
      $0.nextID = 2
      $0.saving = true
    }
    await store.receive(.internal(.saved)) { $0.saving = false }
    await store.receive(event: .toast(message: "Saved"))
    await store.send(.toggle(id: 1)) { $0.todos.modify(id: 1) { $0.done = true } }
    await store.finish()
    #expect(await api.saved == ["Write the README"])
  }

  @Test func aBlankTitleIsRefusedWithItsPointer() throws {
    let store = Store(feature: Todos(api: TodoAPI()))
    #expect(throws: ActionError.invalid(pointer: "/title", reason: "expected a non-blank title")) {
      try store.send(wire: ["type": "add", "title": "  "], cause: nil)
    }
    #expect(
      throws: ActionError.refused(
        type: "saved", reason: "\"saved\" is not an action clients may send")
    ) { try store.send(wire: ["type": "saved"], cause: nil) }
    #expect(store.version == 0)
  }

  @Test func itsNamesComeFromItsTypes() {
    #expect(Todos.caseNames.publicActions == ["add", "toggle"])
    #expect(Todos.caseNames.internalActions == ["saved"])
    #expect(Todos.caseNames.events == ["toast"])
    #expect(Todos.caseNameProblems == [])
  }

  @Test func itsSchemasDescribeEveryType() {
    #expect(Todos(api: TodoAPI()).descriptor().schemaProblems == [])
  }
}

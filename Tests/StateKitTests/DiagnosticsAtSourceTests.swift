import JSON
import StateKit
@_spi(Testing) import StateKitTesting
import Synchronization
import Testing

/// Programming errors are reported where they were written: a test failure at the `.run`,
/// `.emit` or `send` in `TestStore`, a log line naming the file and line in the server.
@StateActor
@Suite(.serialized) struct DiagnosticsAtSourceTests {
  @Test func anEffectThatThrowsWithoutCatchFailsAtItsRun() async {
    let failures = Failures()
    let store = TestStore(feature: Faulty())
    store.failureHandler = failures.record
    await store.send(.throwInEffect)
    await store.finish()
    #expect(failures.messages.count == 1)
    #expect(failures.messages.first?.contains("threw Boom() and has no catch handler") == true)
    #expect(failures.lines == [Faulty.throwing.line])
    #expect(failures.files == ["StateKitTests/DiagnosticsAtSourceTests.swift"])
  }

  @Test func anEventThatDoesNotEncodeFailsAtItsEmit() async {
    let failures = Failures()
    let store = TestStore(feature: Faulty())
    store.failureHandler = failures.record
    await store.send(.emitUnencodable)
    #expect(failures.messages.first?.contains("an event of faulty does not encode") == true)
    #expect(failures.lines == [Faulty.unencodable.line])
  }

  @Test func aSendToAClosedStoreFailsAtTheSend() async {
    let failures = Failures()
    let store = TestStore(feature: Faulty())
    store.failureHandler = failures.record
    store.store.close()
    await store.send(.throwInEffect)
    let line = #line - 1
    #expect(failures.messages.first?.contains("was sent to the closed store faulty") == true)
    #expect(failures.lines == [line])
  }

  @Test func aViewThatDoesNotEncodeFailsAtTheSendThatChangedIt() async {
    let failures = Failures()
    let store = TestStore(feature: Faulty())
    store.failureHandler = failures.record
    await store.send(.breakView) { $0.broken = true }
    let line = #line - 1
    #expect(failures.messages.first?.contains("a view of type View does not encode") == true)
    #expect(failures.lines == [line])
  }

  @Test func theServerLogsTheSite() async {
    let lines = Mutex<[String]>([])
    Diagnostics.route { message in lines.withLock { $0.append(message) } }
    defer { Diagnostics.routeToStandardError() }
    let store = Store(feature: Faulty())
    store.send(.throwInEffect)
    await store.settleEffects()
    let logged = lines.withLock { $0 }.filter { $0.contains("faulty") }
    #expect(
      logged == [
        "StateKitTests/DiagnosticsAtSourceTests.swift:\(Faulty.throwing.line): an effect of "
          + "faulty threw Boom() and has no catch handler"
      ])
  }
}

struct Boom: Error {}

/// A feature with a programmer's mistakes in it, each effect made on one line with its `#line`.
struct Faulty: Feature {
  struct State: Codable, Equatable, Sendable { var broken = false }
  /// Encodes until the state is broken.
  struct View: Codable, Equatable, Sendable {
    var broken: Bool
    func encode(to encoder: any Encoder) throws {
      if broken { throw Boom() }
      var container = encoder.singleValueContainer()
      try container.encode(["broken": false])
    }
  }
  enum Action: Codable, Equatable, Sendable {
    case throwInEffect
    case emitUnencodable
    case breakView
  }
  enum Event: Codable, Sendable {
    case unencodable
    func encode(to encoder: any Encoder) throws { throw Boom() }
  }
  static let name = "faulty"

  static var throwing: (effect: Effect<Action, Event>, line: Int) {
    (.run { _ in throw Boom() }, #line)
  }
  static var unencodable: (effect: Effect<Action, Event>, line: Int) {
    (.emit(.unencodable), #line)
  }

  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Event> {
    switch action {
    case .throwInEffect: return Self.throwing.effect
    case .emitUnencodable: return Self.unencodable.effect
    case .breakView:
      state.broken = true
      return .none
    }
  }

  func view(of state: State) -> View { View(broken: state.broken) }
}

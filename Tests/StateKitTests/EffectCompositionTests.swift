import StateKit
import StateKitTesting
import Testing

/// A feature that runs effects in sequence and in parallel, and a mapped child effect.
struct Sequencer: Feature {
  struct State: Codable, Equatable, Sendable {
    var log: [String] = []
  }
  enum Action: Codable, Equatable, Sendable, EmbedsInternalActions {
    case sequence
    case parallel
    case `internal`(Internal)

    /// Each step the effects send.
    enum Internal: Codable, Equatable, Sendable {
      case step(String)
    }
  }

  static let name = "sequencer"

  let clock: any Clock<Duration>

  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .sequence:
      return .concatenate(
        .run { [clock] send in
          try await clock.sleep(for: .seconds(1))
          await send(.internal(.step("slow")))
        },
        .send(.internal(.step("then"))),
        .run { send in await send(.internal(.step("last"))) })
    case .parallel:
      let child: Effect<String, Never> = .run { send in await send("mapped") }
      return .merge(.send(.internal(.step("now"))), child.map { Action.internal(.step($0)) })
    case .internal(.step(let name)):
      state.log.append(name)
      return .none
    }
  }
}

@StateActor
@Suite struct EffectCompositionTests {
  @Test func concatenatedEffectsRunOneAfterTheOther() async {
    let clock = TestClock()
    let store = TestStore(feature: Sequencer(clock: clock))
    await store.send(.sequence)
    await clock.advance(by: .milliseconds(999))
    #expect(store.state.log == [])
    await clock.advance(by: .milliseconds(1))
    await store.receive(.internal(.step("slow"))) { $0.log = ["slow"] }
    await store.receive(.internal(.step("then"))) { $0.log += ["then"] }
    await store.receive(.internal(.step("last"))) { $0.log += ["last"] }
    await store.finish()
  }

  @Test func mergedAndMappedEffectsAllArrive() async {
    let store = TestStore(feature: Sequencer(clock: TestClock()))
    await store.send(.parallel)
    await store.receive(.internal(.step("now"))) { $0.log = ["now"] }
    await store.receive(.internal(.step("mapped"))) { $0.log += ["mapped"] }
    await store.finish()
  }

  @Test func anImmediateClockSleepsNoTimeAtAll() async {
    let clock = ImmediateClock()
    let store = TestStore(feature: Sequencer(clock: clock))
    await store.send(.sequence)
    await store.receive(.internal(.step("slow"))) { $0.log = ["slow"] }
    await store.receive(.internal(.step("then"))) { $0.log += ["then"] }
    await store.receive(.internal(.step("last"))) { $0.log += ["last"] }
    await store.finish()
    #expect(clock.now.offset == .seconds(1))
  }

  @Test func settledCoversTheWholeConcatenation() async {
    let clock = TestClock()
    let store = Store(feature: Sequencer(clock: clock))
    let transaction = store.send(.sequence)
    await store.settleEffects()
    let settled = Task { await store.settled(transaction) }
    await clock.advance(by: .seconds(1))
    await settled.value
    #expect(store.state.log == ["slow", "then", "last"])
    #expect(store.inFlightEffectCount == 0)
  }
}

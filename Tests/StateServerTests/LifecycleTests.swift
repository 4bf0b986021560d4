import StateKit
import Testing

@testable import StateServer

/// A connection's life (``Lifecycle``): serving, draining, stopped, and the signals that move it.
@StateActor
@Suite struct LifecycleTests {
  @Test func theDrainBeginsOnceAndKeepsItsReplies() {
    var life = Lifecycle.start
    #expect(life.isServing)
    let began = life.drain()
    let againBegan = life.drain()
    #expect(began && !againBegan)
    let reply = PendingReply(id: 1)
    life.answerAtEnd(reply)
    #expect(life.shutdownReplies.count == 1 && life.shutdownReplies[0] === reply)
    #expect(life.status == nil)
    life.stop(status: 0)
    #expect(life.status == 0)
    #expect(!life.isServing)
    #expect(life.shutdownReplies.isEmpty)
  }

  @Test func aFirstSignalWaitsForTheInputBeforeItThenASecondExits() {
    var life = Lifecycle.start
    let firstExits = life.receivedSignal { 42 }
    #expect(!firstExits)
    guard case .serving(let drainAt) = life else {
      Issue.record("a first signal does not begin the drain by itself")
      return
    }
    #expect(drainAt == 42)
    let began = life.drain()
    #expect(began && life.signalled)
    let secondExits = life.receivedSignal { 0 }
    #expect(secondExits)
  }

  @Test func aSignalDuringADrainIsTheFirstAndItsOffsetIsNotAsked() {
    var life = Lifecycle.start
    _ = life.drain()
    var asked = false
    let firstExits = life.receivedSignal {
      asked = true
      return 0
    }
    #expect(!firstExits)
    #expect(!asked)
    #expect(life.signalled)
    life.stop(status: 0)
    // Stopped, the server may still wait for attached clients: a second signal must exit.
    let secondExits = life.receivedSignal { 0 }
    #expect(secondExits)
  }
}

// Per-action cost of send + reduce + publish, measured side by side in one run:
// a counter, and an edit of one element of keyed collections of 1,000 and 100,000 elements.
// The target: the 100,000 case costs at most 10x the 1,000 case.
import JSON
import StateKit

#if canImport(Glibc)
  import Glibc
#endif

struct BenchCounter: Feature {
  struct State: Codable, Equatable, Sendable { var count = 0 }
  enum Action: Codable, Equatable, Sendable { case increment }
  static let name = "counter"
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    state.count += 1
    return .none
  }
}

struct Item: Codable, Equatable, Sendable, Identifiable {
  var id: Int
  var title: String
  var quantity: Int
  var done: Bool
}

struct Catalog: Feature {
  struct State: Codable, Equatable, Sendable {
    var title = "catalog"
    var items: IdentifiedArray<Item> = []
  }
  enum Action: Codable, Equatable, Sendable { case bump(id: Int) }
  static let name = "catalog"
  let size: Int
  var initialState: State {
    State(
      items: IdentifiedArray(
        (0..<size).map {
          Item(id: $0, title: "item \($0)", quantity: 0, done: false)
        }))
  }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .bump(let id): state.items[id: id]?.quantity += 1
    }
    return .none
  }
}

/// Nanoseconds per action over `count` actions sent by `send`.
@StateActor
func measure(_ count: Int, _ send: (Int) -> Void) -> Double {
  let clock = ContinuousClock()
  for index in 0..<min(count, 100) { send(index) }  // warm up
  let elapsed = clock.measure { for index in 0..<count { send(index) } }
  let (seconds, attoseconds) = elapsed.components
  return (Double(seconds) * 1e9 + Double(attoseconds) / 1e9) / Double(count)
}

@StateActor
func run() {
  var operations = 0
  let counter = Store(feature: BenchCounter())
  counter.observer = { operations += $0.patch.count }
  let counterNs = measure(200_000) { _ in counter.send(.increment) }
  let counterWire = measure(200_000) { _ in
    _ = try? counter.send(wire: ["type": "increment"], cause: nil)
  }

  var results: [(Int, Double)] = []
  for size in [1_000, 100_000] {
    let store = Store(feature: Catalog(size: size))
    store.observer = { operations += $0.patch.count }
    let actions = size == 1_000 ? 20_000 : 2_000
    let ns = measure(actions) { index in store.send(.bump(id: (index &* 7919) % size)) }
    results.append((size, ns))
  }
  let small = results[0].1
  let large = results[1].1
  func format(_ ns: Double) -> String {
    ns >= 10_000 ? "\(Int(ns / 1000)) µs" : "\(Int(ns)) ns"
  }
  print("statekit: per action, send + reduce + publish (release build, one run)")
  print("  counter, typed send:             \(format(counterNs))")
  print("  counter, wire send (decode too): \(format(counterWire))")
  print("  edit 1 of 1,000 keyed elements:   \(format(small))")
  print("  edit 1 of 100,000 keyed elements: \(format(large))")
  let ratio = large / small
  print("  ratio 100k/1k: \((ratio * 100).rounded() / 100)x (target <= 10x)")
  if operations == 0 { print("  (no patch operations were published: broken)") }
}

// On the main thread, as the server runs its stores: it takes the state actor's executor over.
StateExecutor.shared.takeOver()
StateActor.assumeIsolated { run() }

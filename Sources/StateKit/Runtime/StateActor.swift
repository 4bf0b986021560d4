/// The global actor every store, reducer, effect continuation and the server's connection run
/// on: one actor for the whole application state, so a batch of requests reduces without a
/// hop between stores, and what a store publishes arrives in order.
///
/// Annotate what touches stores with `@StateActor`, as you would with `@MainActor`:
///
/// ```swift
/// @StateActor
/// func bump(_ store: Store<Counter>) { store.send(.increment) }
///
/// Task { @StateActor in store.send(.increment) }
/// ```
///
/// Its executor (``StateExecutor``) runs jobs on a private serial dispatch queue until a
/// thread takes it over: the server's main thread does at start (`Server.main`), and then
/// waits for stdin and runs the actor's jobs itself, one thread wake-up per request. It is
/// not the main actor: a `@MainActor` function that touches a store must hop
/// (`await`), and code that must run on the main thread belongs to the executable.
@globalActor
public actor StateActor {
  public static let shared = StateActor()

  public nonisolated var unownedExecutor: UnownedSerialExecutor {
    StateExecutor.shared.asUnownedSerialExecutor()
  }

  /// Runs `operation` as `@StateActor` code, synchronously, after checking that the caller is
  /// isolated to the actor (the thread that drives it, or one of its jobs); stops the process
  /// otherwise. Like `MainActor.assumeIsolated`, for a callback the compiler cannot see is on
  /// the actor.
  public static func assumeIsolated<T: Sendable>(
    _ operation: @StateActor () throws -> T, file: StaticString = #fileID, line: UInt = #line
  ) rethrows -> T {
    shared.preconditionIsolated(
      "Not isolated to StateActor: call this on the thread that drives it or from its jobs",
      file: file, line: line)
    // The check above proves the caller holds the actor's isolation, which is all that
    // `@StateActor` adds to the function's type: the standard library's
    // `MainActor.assumeIsolated` strips its global actor the same way.
    typealias Plain = () throws -> T
    return try withoutActuallyEscaping(operation) { operation in
      try unsafeBitCast(operation, to: Plain.self)()
    }
  }
}

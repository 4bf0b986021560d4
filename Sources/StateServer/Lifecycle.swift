/// Where a connection is in its life, with what its end needs. One value rather than a flag per
/// fact, so that no two can disagree: a drain cannot begin twice, a status cannot exist before
/// the stop, and the `shutdown` replies exist only while there is a drain to answer them.
///
/// The way through is always serving, draining, stopped (Connection+Shutdown.swift moves it).
enum Lifecycle {
  /// Serving requests. `drainAt`: a first shutdown signal arrived, and the drain begins once
  /// every line that began before this input offset is served.
  case serving(drainAt: Int?)
  /// Refusing new requests with -32010 while effects finish. `signalled`: a shutdown signal
  /// was received, so the next one exits at once. `replies`: the `shutdown` requests, answered
  /// once everything is saved.
  case draining(signalled: Bool, replies: [PendingReply])
  /// The drain is done; the run ends with `status`. A signal still counts: the attached
  /// clients may take a drain timeout to close, and a second signal must not wait for them.
  case stopped(status: Int32, signalled: Bool)

  static let start = Lifecycle.serving(drainAt: nil)

  var isServing: Bool {
    if case .serving = self { return true }
    return false
  }

  /// Whether a shutdown signal was received already.
  var signalled: Bool {
    switch self {
    case .serving(let drainAt): drainAt != nil
    case .draining(let signalled, _), .stopped(_, let signalled): signalled
    }
  }

  /// The `shutdown` requests waiting for the drain to end.
  var shutdownReplies: [PendingReply] {
    if case .draining(_, let replies) = self { return replies }
    return []
  }

  /// The exit status, once stopped.
  var status: Int32? {
    if case .stopped(let status, _) = self { return status }
    return nil
  }

  /// Begins the drain; false when it had begun already (or the connection stopped).
  mutating func drain() -> Bool {
    guard case .serving = self else { return false }
    self = .draining(signalled: signalled, replies: [])
    return true
  }

  /// Records a shutdown signal; returns whether it is the second, which exits at once.
  /// `drainAt` is asked only for a first signal while serving.
  mutating func receivedSignal(drainAt: () -> Int) -> Bool {
    if signalled { return true }
    switch self {
    case .serving: self = .serving(drainAt: drainAt())
    case .draining(_, let replies): self = .draining(signalled: true, replies: replies)
    case .stopped(let status, _): self = .stopped(status: status, signalled: true)
    }
    return false
  }

  /// Keeps a `shutdown` request's reply for the end of the drain.
  mutating func answerAtEnd(_ reply: PendingReply) {
    guard case .draining(let signalled, var replies) = self else { return }
    replies.append(reply)
    self = .draining(signalled: signalled, replies: replies)
  }

  /// Ends the run with `status`.
  mutating func stop(status: Int32) {
    self = .stopped(status: status, signalled: signalled)
  }
}

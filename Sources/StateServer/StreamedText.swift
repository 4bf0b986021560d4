import JSON

/// The text of one response, handed from the state actor, which writes it, to the writer thread,
/// which sends it, piece by piece while it is written: a `store/open` or `state/get` of a
/// million-element state goes out as it is made, and is never whole in memory while a client
/// keeps reading (docs/architecture.md, "The open at scale").
///
/// The writer never makes the state actor wait: the actor appends each piece and goes on, and a
/// client that reads slowly only lets pieces pile up here, counted in the output's budget
/// (``OutputQueue/account(_:)``) as any other queued line is.
final class StreamedText: @unchecked Sendable {
  // Safety: every mutable property is read and written only with `condition` locked; the state
  // actor (appending) and the writer thread (taking) meet nowhere else.
  private let condition = Condition()
  private var pieces: [[UInt8]] = []
  private var ending: Ending?
  private let budget: OutputQueue?
  /// The request the text answers (its result: the writer writes the response around it); nil
  /// for a text that is a whole line of its own (a notification).
  let id: JSON?

  /// How the text ended.
  enum Ending: Sendable {
    /// The whole result was written.
    case finished
    /// Writing it failed; `replacement` is the line that answers the request instead (the
    /// result as a JSON value, or the error that says why it cannot be written); nil for a
    /// notification, which answers nothing (the failure is logged).
    case failed(replacement: Outgoing?)
  }

  /// `id`: the request whose result the text is (nil: the text is a whole line); `budget`: the
  /// queue whose output budget counts the pieces until the writer has them.
  init(answering id: JSON?, budget: OutputQueue?) {
    self.id = id
    self.budget = budget
  }

  /// Appends the next piece of the result's text (state actor).
  func append(_ piece: UnsafeRawBufferPointer) {
    guard piece.count > 0 else { return }
    let copy = [UInt8](piece)
    budget?.account(copy.count)
    condition.lock()
    pieces.append(copy)
    condition.signal()
    condition.unlock()
  }

  /// Writes the text `body` writes (state actor), handing each megabyte on as it is made, and
  /// ends it. When `body` throws, the text is left unended, for the caller to end with what
  /// replaces it.
  func write(_ body: (inout JSONWriter) throws -> Void) throws {
    let piece = 1 << 20
    var writer = JSONWriter(capacity: piece)
    try writer.write(handingOnAt: piece, to: append, body)
    writer.withUnsafeBytes(append)
    end(.finished)
  }

  /// The text is complete, or will never be (state actor); nothing is appended after this.
  func end(_ ending: Ending) {
    condition.lock()
    self.ending = ending
    condition.signal()
    condition.unlock()
  }

  /// Waits for pieces or the end, and takes every piece there is (writer thread). `ending` is
  /// set once every piece before it was taken.
  func take() -> (pieces: [[UInt8]], ending: Ending?) {
    condition.lock()
    defer { condition.unlock() }
    while pieces.isEmpty && ending == nil { condition.wait() }
    let taken = pieces
    pieces = []
    return (taken, ending)
  }

  /// Waits for the end and takes the whole text: for a reader that needs the line whole (never
  /// the writer thread, which sends each piece as it comes).
  func collect() -> (text: [UInt8], ending: Ending) {
    var text: [UInt8] = []
    while true {
      let (pieces, ending) = take()
      for piece in pieces {
        text.append(contentsOf: piece)
        budget?.release(piece.count, written: 0)
      }
      if let ending { return (text, ending) }
    }
  }
}

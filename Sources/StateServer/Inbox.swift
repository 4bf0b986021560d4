import FoundationEssentials
import JSON

/// One input line as the reader hands it over: already parsed, so the JSON parse runs on the
/// reader thread in parallel with reducing on the state actor.
enum InboundLine: Sendable {
  /// A plain request whose framing ``RequestEnvelope`` read: valid as an envelope already.
  case request(RequestEnvelope)
  /// Any other message, parsed whole.
  case message(JSON)
  /// Boxed: the error is ten words, a line is 41 bytes without it (a request's id, method and
  /// params), and lines move through arrays by the thousand (a line was 72 bytes, copied into
  /// each batch; a malformed line is rare).
  indirect case malformed(JSONParseError)
  /// A line longer than `--max-message-bytes`, skipped unread; `bytes` is its length.
  case oversize(bytes: Int)
  /// Stdin ended (or the server stopped reading): shut down once the lines before are served.
  case endOfInput
}

/// The hand-off from a reader thread (an attached client's ``LineReader``, or the main loop's
/// ``ParseAhead``) to the state actor. Lines move in batches, one main-actor hop per batch: a
/// hop per line costs about 25 times more (measured here: 5.5 s against 0.2 s per million
/// lines through an AsyncStream).
///
/// The ``ParseAhead`` thread queues framed lines not parsed yet (``FramedChunk``) behind the
/// parsed ones: each chunk is parsed by whichever thread claims it first (``claim()``), and
/// the main loop's take claims and parses chunks itself while it has nothing parsed to serve.
/// A parsed chunk joins the lines to serve only once every chunk before it has, so the lines
/// are served in input order whoever parsed them.
///
/// The reader waits in its push while `capacity` lines or `maxBytes` bytes of input are
/// queued, parsed or not, so a state actor that falls behind slows the reader down instead of
/// letting memory grow.
final class Inbox: @unchecked Sendable {
  // Safety: every stored `var` is only touched with `condition` locked; `capacity`, `maxBytes`
  // and `wake` are immutable. A claimed chunk is parsed outside the lock from a copy (a
  // `Sendable` value); only the thread that claimed it stores its result (``finish(_:_:)``).
  private let condition = Condition()
  /// Parsed lines ready to serve, in input order, before every chunk in `chunks`.
  private var lines: [InboundLine] = []
  /// The runs of `lines` the consumer parsed itself.
  private var stolen: [Range<Int>] = []
  /// Framed chunks not yet joined to `lines`, in input order; `firstChunk` numbers the first.
  private var chunks: [Slot] = []
  private var firstChunk = 0
  /// Lines queued, parsed or not.
  private var queued = 0
  private var bytes = 0
  /// Of `bytes`, those of the lines in `lines`, and the input offset they reach.
  private var readyBytes = 0
  private var readyOffset = 0
  /// Bytes of input read so far, through the last push.
  private var offset = 0
  /// The reader gave reading back to the main loop after the lines queued (``ParseAhead``).
  private var returned = false
  private var drainScheduled = false
  private var closed = false
  private let capacity: Int
  private let maxBytes: Int
  private let wake: @Sendable () -> Void

  private struct Slot {
    enum State {
      case waiting
      case claimed
      case parsed([InboundLine])
    }
    var chunk: FramedChunk
    var state: State
    /// The input bytes the chunk accounts for, and the offset serving it reaches.
    var bytes: Int
    var offset: Int
    /// Parsed by the consumer (``takeForMainLoop()``).
    var stolen = false
  }

  /// `wake` is called (outside the lock) when lines arrive and no drain is scheduled; it must
  /// arrange for ``take()`` to be called on the consumer's side.
  init(capacity: Int, maxBytes: Int = 8 << 20, wake: @escaping @Sendable () -> Void) {
    self.capacity = capacity
    self.maxBytes = maxBytes
    self.wake = wake
  }

  /// Blocks while the inbox is full; false once closed. Called locked.
  private func waitForRoom() -> Bool {
    while (queued >= capacity || bytes >= maxBytes) && queued > 0 && !closed {
      condition.wait()
    }
    return !closed
  }

  /// Marks that a drain is due; whether the caller must call `wake` (outside the lock).
  private func scheduleDrain() -> Bool {
    let mustWake = !drainScheduled
    drainScheduled = true
    return mustWake
  }

  /// Queues a batch read from `bytes` bytes of input, which took the input read so far to
  /// `offset` bytes; blocks while the inbox is full. Returns false once closed (stop reading).
  /// A batch with no line (a read that ended inside a long line) still moves ``readOffset`` on.
  /// Not mixed with chunks (``push(chunks:bytes:through:)``) in one inbox.
  @discardableResult
  func push(_ batch: [InboundLine], bytes batchBytes: Int = 0, through offset: Int) -> Bool {
    condition.lock()
    guard waitForRoom() else {
      condition.unlock()
      return false
    }
    bytes += batchBytes
    readyBytes += batchBytes
    self.offset = offset
    readyOffset = offset
    queued += batch.count
    lines.append(contentsOf: batch)
    if case .endOfInput? = batch.last { closed = true }
    let mustWake = scheduleDrain()
    condition.unlock()
    if mustWake { wake() }
    return true
  }

  /// ``push(_:bytes:through:)`` for chunks framed but not parsed: they wait behind the lines
  /// queued before for a thread to claim them. Wakes the consumer, which may parse them itself.
  @discardableResult
  func push(chunks batch: [FramedChunk], bytes batchBytes: Int, through offset: Int) -> Bool {
    condition.lock()
    guard waitForRoom() else {
      condition.unlock()
      return false
    }
    let before = self.offset
    bytes += batchBytes
    self.offset = offset
    if batch.isEmpty {
      // A read inside a long line: its bytes and offset go with what is queued last.
      if chunks.isEmpty {
        readyBytes += batchBytes
        readyOffset = offset
      } else {
        chunks[chunks.count - 1].bytes += batchBytes
        chunks[chunks.count - 1].offset = offset
      }
    }
    for (index, chunk) in batch.enumerated() {
      let isLast = index == batch.count - 1
      // An earlier chunk of the read reaches only what was read before (its lines may begin
      // there); the last reaches the whole read.
      chunks.append(
        Slot(
          chunk: chunk, state: .waiting, bytes: isLast ? batchBytes : 0,
          offset: isLast ? offset : before))
      queued += chunk.items.count
    }
    if batch.last?.endsInput == true { closed = true }
    let mustWake = scheduleDrain()
    condition.unlock()
    if mustWake { wake() }
    return true
  }

  /// Claims the oldest chunk nobody parses yet: the caller parses it and hands the lines to
  /// ``finish(_:_:)`` with the number returned. Nil when no more than `leaving` chunks wait.
  func claim(leaving: Int = 0) -> (number: Int, chunk: FramedChunk)? {
    condition.lock()
    defer { condition.unlock() }
    return claimLocked(leaving: leaving)
  }

  /// ``claim(leaving:)`` for the reader: a chunk while more than `keeping` wait, or while any
  /// waits and the inbox is full (a read would only wait for room; parsing makes none, but the
  /// chunk is then ready when the consumer takes).
  func claimForReader(keeping: Int) -> (number: Int, chunk: FramedChunk)? {
    condition.lock()
    defer { condition.unlock() }
    let full = queued >= capacity || bytes >= maxBytes
    return claimLocked(leaving: full ? 0 : keeping)
  }

  private func claimLocked(leaving: Int = 0) -> (number: Int, chunk: FramedChunk)? {
    var index: Int? = nil
    var waiting = 0
    for position in chunks.indices.reversed() {
      guard case .waiting = chunks[position].state else { continue }
      index = position
      waiting += 1
    }
    guard let index, waiting > leaving else { return nil }
    chunks[index].state = .claimed
    return (firstChunk + index, chunks[index].chunk)
  }

  /// Stores the parsed lines of the chunk claimed as `number`; with the chunks before it all
  /// parsed, they are ready to serve and the consumer is woken.
  func finish(_ number: Int, _ parsed: [InboundLine]) {
    condition.lock()
    let mustWake = finishLocked(number, parsed) && scheduleDrain()
    condition.unlock()
    if mustWake { wake() }
  }

  /// Whether lines became ready.
  private func finishLocked(_ number: Int, _ parsed: [InboundLine]) -> Bool {
    let index = number - firstChunk
    guard chunks.indices.contains(index) else { return false }
    chunks[index].state = .parsed(parsed)
    var joined = false
    while let first = chunks.first, case .parsed(let ready) = first.state {
      if first.stolen { stolen.append(lines.count..<(lines.count + ready.count)) }
      if lines.isEmpty { lines = ready } else { lines.append(contentsOf: ready) }
      readyBytes += first.bytes
      readyOffset = first.offset
      chunks.removeFirst()
      firstChunk += 1
      joined = true
    }
    return joined
  }

  /// The reader stopped reading and gives stdin back to the main loop: taken with the lines
  /// queued before it (``takeForMainLoop()``), so the main loop reads on only after them.
  func returnReading() {
    condition.lock()
    returned = true
    let mustWake = scheduleDrain()
    condition.unlock()
    if mustWake { wake() }
  }

  /// Everything parsed and queued, oldest first. An empty result ends the current drain: the
  /// next push wakes the consumer again.
  func take() -> [InboundLine] {
    takeWithOffset().lines
  }

  /// Bytes of input read so far, as of the last push (the lines they hold may still be queued).
  var readOffset: Int {
    condition.lock()
    defer { condition.unlock() }
    return offset
  }

  /// ``take()``, with the input offset the taken lines reach: once they are served, every
  /// line that began before `offset` has been.
  func takeWithOffset() -> (lines: [InboundLine], offset: Int) {
    let taken = takeForMainLoop()
    return (taken.lines, taken.offset)
  }

  /// ``takeWithOffset()``, and whether the reader gave reading back after these lines
  /// (``returnReading()``). While no line is ready to serve, the caller parses waiting chunks
  /// itself, oldest first, instead of waiting for the reader to (work stealing); when the
  /// oldest chunk is still being parsed by the reader, the result is empty and the reader's
  /// ``finish(_:_:)`` wakes the consumer.
  ///
  /// `stolen` are the runs of `lines` parsed here: the caller frees them itself (they were
  /// allocated on its thread; freed on the reader's, they would take glibc's slow path back
  /// into this thread's arena, under its lock, against this thread's own allocations).
  ///
  /// `beforeEachParse` runs before each line parsed here (the main loop frees a line it parsed
  /// before there, ``RetiredLines``).
  func takeForMainLoop(beforeEachParse: () -> Void = {}) -> (
    lines: [InboundLine], offset: Int, returned: Bool, stolen: [Range<Int>]
  ) {
    condition.lock()
    while lines.isEmpty, let (number, chunk) = claimLocked() {
      chunks[number - firstChunk].stolen = true
      condition.unlock()
      let parsed = chunk.parse(beforeEachParse)
      condition.lock()
      _ = finishLocked(number, parsed)  // no wake-up: this thread takes them now
    }
    let isReturned = returned && chunks.isEmpty
    let taken = (lines, readyOffset, isReturned, stolen)
    lines = []
    stolen = []
    queued -= taken.0.count
    bytes -= readyBytes
    readyBytes = 0
    if isReturned { returned = false }
    // Nothing more comes until the next push or finish (or, once reading was given back,
    // until the reader takes over again): that must wake the consumer.
    if taken.0.isEmpty || isReturned { drainScheduled = false }
    condition.broadcast()
    condition.unlock()
    return taken
  }
}

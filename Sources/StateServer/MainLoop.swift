import CMainQueue
import JSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The process's main thread as the server's one hot thread: it waits in `poll(2)` on stdin and
/// on the main queue's handle, reads and parses a line, runs the main actor's work (reducers,
/// effects' continuations, replies) and writes the answer itself (``StdoutWriter``'s direct
/// write), with no hand-off to another thread.
///
/// A request used to wake three threads in turn (reader, main actor, writer); on these virtual
/// machines a wake-up costs more than the request's own work. Threads remain where they pay
/// off: the ``ParseAhead`` thread reads and parses while input queues up (a pipelining
/// client), the writer thread takes over when output queues up (a slow client), and the signal
/// thread only forwards signals. Reading stops while the output is over its budget or lines
/// are held back for it (``Connection/wantsInput``), exactly like the reader thread's wait.
@MainActor
final class MainLoop {
  /// Where the next lines come from, or nothing while the connection wants none.
  enum Source {
    case none
    /// Stdin, read by the main thread itself.
    case input
    /// The ``ParseAhead`` thread's inbox (it owns reading while input queues up).
    case inbox
  }

  private let input: Int32
  private let framer: LineFramer
  private let connection: Connection
  private let parseAhead: ParseAhead
  /// The pipe that wakes the main thread when the parse-ahead thread queued lines.
  private let wakeReader: Int32
  /// Bytes of input read so far, as far as the lines handed to the connection reach.
  private(set) var offset = 0
  private var ended = false
  /// Whether the parse-ahead thread owns reading.
  private var parserReads = false
  /// The last take from the inbox brought lines: take again before waiting for a wake-up.
  private var mayHaveMore = false
  /// Served lines this thread parsed itself, freed as it parses the next (``RetiredLines``).
  private var ownRetired = RetiredLines()

  init(input: Int32, maxMessageBytes: Int, connection: Connection, maxQueuedInputBytes: Int) {
    self.input = input
    self.framer = LineFramer(maxMessageBytes: maxMessageBytes)
    self.connection = connection
    var ends: [Int32] = [-1, -1]
    if pipe(&ends) == 0 {
      for end in ends {
        _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      }
    }
    let (wakeReader, wakeWriter) = (ends[0], ends[1])
    self.wakeReader = wakeReader
    self.parseAhead = ParseAhead(
      fd: input, framer: framer, output: connection.output,
      maxQueuedInputBytes: maxQueuedInputBytes
    ) {
      var byte: UInt8 = 1
      _ = write(wakeWriter, &byte, 1)  // full pipe (EAGAIN): a wake-up is pending anyway
    }
  }

  var source: Source {
    guard !ended, connection.wantsInput else { return .none }
    return parserReads ? .inbox : .input
  }

  /// Bytes of input read so far by either thread (the parse-ahead thread may have read more
  /// than the lines handed to the connection reach).
  var readOffset: Int { max(offset, parseAhead.inbox.readOffset) }

  /// One read (stdin is readable: it does not block) and the lines it completes, served now.
  /// A read that brings more than one line means the client pipelines: reading goes to the
  /// parse-ahead thread, which reads and parses the next lines while these are served.
  func readAndServe() {
    let (lines, count) = framer.next(from: input)
    if count > 0 { offset += count } else { ended = true }
    // Without its wake-up pipe (out of descriptors) the thread could not wake this one.
    if count > 0 && lines.count > 1 && wakeReader >= 0 {
      parserReads = true
      parseAhead.takeOver()
    }
    connection.receive(read: lines, through: offset)
    // Served: the batch is freed now, as `takeAndServe` does. The empty `held` slice left
    // behind shares its buffer, and kept a large line (a `store/open` of a big state) alive
    // until the next line came, whose answer then waited for the free (a tenth of a second
    // per 100,000 notes; docs/architecture.md, "State at scale").
    if connection.held.isEmpty { connection.held = [] }
    // Its lines were parsed inside the read: a buffer a long one grew goes now, unless the
    // parse-ahead thread, which reads with the same framer, has just taken reading over.
    if !parserReads { framer.shrinkAfterLongLine() }
  }

  /// Serves the lines the parse-ahead thread queued, and takes reading back when it gave it up.
  /// With no parsed line to serve, the take parses waiting lines here (``Inbox/takeForMainLoop()``).
  func takeAndServe() {
    var sink = [UInt8](repeating: 0, count: 64)
    _ = read(wakeReader, &sink, sink.count)  // before the take: a later push wakes again
    var (lines, readTo, returned, stolen) = parseAhead.inbox.takeForMainLoop {
      ownRetired.dropOne()
    }
    if returned { parserReads = false }
    mayHaveMore = !lines.isEmpty && !returned
    if case .endOfInput? = lines.last { ended = true }
    offset = max(offset, readTo)
    connection.receive(read: lines, through: offset)
    // Served (not held back for the output): the batch is freed by the thread that parsed it.
    if connection.held.isEmpty && !lines.isEmpty {
      connection.held = []
      // The lines parsed here are freed here (see takeForMainLoop), the rest over there: one
      // for each line this thread parses next, like the parse-ahead thread's.
      for run in stolen {
        var moved: [InboundLine] = []
        moved.reserveCapacity(run.count)
        for index in run {
          var line = InboundLine.endOfInput
          swap(&line, &lines[index])  // moved out, no reference count touched
          moved.append(line)
        }
        ownRetired.retire(moved)
      }
      parseAhead.release(&lines)
    }
    // A take that parsed nothing, or the last before this thread reads again itself, frees
    // them all: none outlives the stealing (the idle trim could not free them).
    if stolen.isEmpty || returned { ownRetired.dropAll() }
  }

  /// Runs the main queue and serves stdin on the calling thread, forever: the process ends
  /// by `exit` (the server's `run` returning, or a second signal). `loop` is filled in once
  /// the server has opened its stores.
  static func run(input: Int32, loop: @escaping @MainActor () -> MainLoop?) -> Never {
    let handle = cmainqueue_handle()
    // Ours to read: the main queue's eventfd is never read blocking (a spurious wake-up must
    // not park the thread that runs everything).
    _ = fcntl(handle, F_SETFL, fcntl(handle, F_GETFL) | O_NONBLOCK)
    var fds = [
      pollfd(fd: handle, events: Int16(POLLIN), revents: 0),
      pollfd(fd: -1, events: Int16(POLLIN), revents: 0),
    ]
    cmainqueue_drain()
    var trim = IdleTrim()
    while true {
      let current = loop()
      let source = current?.source ?? .none
      switch source {
      case .none: fds[1].fd = -1
      case .input: fds[1].fd = input
      case .inbox: fds[1].fd = current?.wakeReader ?? -1
      }
      fds[0].revents = 0
      fds[1].revents = 0
      // Lines may still wait in the inbox: look, but do not sleep. Otherwise wait, at most
      // until the server has been quiet for IdleTrim.delay once something happened.
      let timeout: Int32 = source == .inbox && current?.mayHaveMore == true ? 0 : trim.timeout
      let ready = poll(&fds, 2, timeout)
      if ready < 0 { continue }  // EINTR: a signal's handler ran; look again
      if ready == 0 && timeout != 0 {
        trim.idle()  // quiet for IdleTrim.delay: free memory goes back to the system
        continue
      }
      trim.sawActivity()
      switch source {
      case .input where fds[1].revents != 0: current?.readAndServe()
      case .inbox where fds[1].revents != 0 || timeout == 0: current?.takeAndServe()
      default: break
      }
      if fds[0].revents != 0 {
        var value: UInt64 = 0
        _ = read(handle, &value, 8)
        cmainqueue_drain()
      }
    }
  }
}

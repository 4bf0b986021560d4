import JSON
import StateKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The process's main thread as the server's one hot thread: it waits in `poll(2)` on stdin and
/// on the state actor's wake-up pipe (``StateExecutor``), reads, frames and parses what came
/// (``LineFramer``, the reader stage), runs the state actor's work (reducers, effects'
/// continuations, replies) and writes the answer itself (``StdoutWriter``'s direct write), with
/// no hand-off to another thread.
///
/// One thread does it all because a thread's wake-up costs more than a request's own work on
/// these machines, and the reader stage no longer needs a thread of its own to keep up with a
/// pipelining client (docs/architecture.md, "Design decisions"). The writer thread takes over
/// only when output queues up (a slow client). Reading stops while the output is over its
/// budget or lines are held back for it (``Connection/wantsInput``).
@StateActor
final class MainLoop {
  private let input: Int32
  private let framer: LineFramer
  private let connection: Connection
  /// Bytes of input read so far.
  private(set) var offset = 0
  private var ended = false

  init(input: Int32, maxMessageBytes: Int, connection: Connection) {
    self.input = input
    self.framer = LineFramer(maxMessageBytes: maxMessageBytes)
    self.connection = connection
  }

  /// Whether the loop waits for stdin now.
  var wantsInput: Bool { !ended && connection.wantsInput }

  /// One read (stdin is readable: it does not block) and the lines it completes, served now.
  func readAndServe() {
    let (lines, count) = framer.next(from: input)
    if count > 0 { offset += count } else { ended = true }
    connection.receive(read: consume lines, through: offset)
  }

  /// Runs the state actor's jobs and serves stdin on the calling thread, which has taken the
  /// actor over (``StateExecutor/takeOver()``), forever: the process ends by `exit` (the
  /// server's `run` returning, or a second signal). `loop` is filled in once the server has
  /// opened its stores.
  static func run(input: Int32, loop: @escaping @StateActor () -> MainLoop?) -> Never {
    let executor = StateExecutor.shared
    let wake = executor.wakeDescriptor
    var fds = [
      pollfd(fd: wake, events: Int16(POLLIN), revents: 0),
      pollfd(fd: -1, events: Int16(POLLIN), revents: 0),
    ]
    var trim = IdleTrim()
    while true {
      // Every job first, those this thread enqueued too (they wrote no wake-up): then the
      // loop may sleep.
      executor.runJobs()
      let current = loop()
      fds[1].fd = current?.wantsInput == true ? input : -1
      fds[0].revents = 0
      fds[1].revents = 0
      // Wait, at most until the server has been quiet for IdleTrim.delay once something happened.
      let ready = poll(&fds, 2, trim.timeout)
      if ready < 0 { continue }  // EINTR: a signal's handler ran; look again
      if ready == 0 {
        trim.idle()  // quiet for IdleTrim.delay: free memory goes back to the system
        continue
      }
      trim.sawActivity()
      if fds[1].revents != 0 { current?.readAndServe() }
      if fds[0].revents != 0 {
        // Before the jobs run (next turn): an enqueue after this read wakes the loop again.
        var sink = (UInt64(0), UInt64(0))
        _ = read(wake, &sink, 16)
      }
    }
  }
}

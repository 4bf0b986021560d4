import CPosix
import FoundationEssentials
import JSON
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The one owner of stdout: a thread that takes everything queued, encodes it into one buffer
/// and writes it with as few `write(2)` calls as the pipe allows.
///
/// It writes whenever lines are committed; the state actor commits once per input batch, so a
/// lone request is answered at once and a flood of requests is answered in large writes. The
/// buffer is written out whenever it passes ``chunkBytes``, and a batch's array of responses is
/// encoded element by element: a response line of gigabytes (1,000 `state/get` of a 4 MB state
/// in one batch) costs one chunk and one element of memory, not the whole line.
final class StdoutWriter: Sendable {
  private let fd: Int32
  private let queue: OutputQueue
  private let log: Log
  /// Called once with `errno` when writing fails (the client closed its end): the owner's
  /// connection begins its shutdown, an attached client's going away is no error of the server's.
  private let onBroken: @Sendable (Int32) -> Void
  static let chunkBytes = 256 << 10
  /// The most bytes the writer thread's buffer has held at once: about a chunk and the largest
  /// line below ``chunkBytes``, however large a line it wrote (lines larger are streamed).
  let largestBuffer = Atomic(0)
  /// Room a direct write's buffer gets past the commit's estimated size, so that an estimate a
  /// little short does not double the buffer.
  static let estimateSlack = 256
  /// The pipe's capacity when stdout is a pipe (0 otherwise): a direct write must fit in it.
  private let pipeCapacity: Int
  /// Whether the kernel writes to this pipe without waiting (`RWF_NOWAIT`, which pipes honour
  /// in recent kernels); cleared the first time it says it cannot.
  private let writesWithoutWaiting: Atomic<Bool>
  /// The largest commit written directly when the kernel cannot write a pipe without waiting:
  /// a write of at most `PIPE_BUF` bytes needs one free page-sized slot, and `poll` tells
  /// whether there is one. That keeps a lone answer free of the writer thread's wake-up there.
  static let oneSlotBytes = 4096

  /// `onBroken` is called once, from the thread that wrote, when the output is closed or fails;
  /// by default it logs an error. `writesWithoutWaiting` false acts as a kernel without
  /// `RWF_NOWAIT` for pipes would (for tests).
  init(
    fd: Int32, queue: OutputQueue, log: Log, writesWithoutWaiting: Bool = true,
    onBroken: (@Sendable (Int32) -> Void)? = nil
  ) {
    self.fd = fd
    self.queue = queue
    self.log = log
    self.onBroken =
      onBroken ?? { code in
        log.error("stdout failed; the remaining output is discarded", ["errno": String(code)])
      }
    var status = stat()
    if fstat(fd, &status) == 0 && (status.st_mode & S_IFMT) == S_IFIFO {
      pipeCapacity = Int(max(fcntl(fd, 1032 /* F_GETPIPE_SZ, Linux only */), 0))
    } else {
      pipeCapacity = 0
    }
    self.writesWithoutWaiting = Atomic(writesWithoutWaiting)
  }

  /// Writes a commit from the caller's thread when nothing else is queued or being written;
  /// returns false when the lines must go through the queue instead. `estimatedBytes`
  /// (``Outgoing/estimatedBytes``, summed) sizes the buffer and turns away, unencoded, a commit
  /// larger than the pipe, which could never go out in one write.
  ///
  /// The write never waits: what the pipe cannot take now is handed, already encoded, to the
  /// writer thread (``OutputQueue/endDirectWrite(written:broken:carrying:)``), so a client that
  /// stops reading can never stop the main thread, which serves every other client, effects and
  /// signals. (Room cannot be judged from the unread bytes: a pipe holds sixteen page-sized
  /// slots, and sixteen 3,000-byte answers fill it at 48,000 of its 65,536 bytes.)
  ///
  /// Not only a lone answer: while a client keeps up with a pipelined stream, each commit (one
  /// per read, about 18 KiB for 80 `counter` increments) goes out here, which spares the writer
  /// thread's wake-up and the hand-over of the lines to another core, which then freed what
  /// this thread made (docs/architecture.md, "The main thread writes its own output").
  /// A client that falls behind fills the pipe, and its output queues up for the writer
  /// thread, where patches merge and compact as before.
  ///
  /// Where the kernel cannot write a pipe without waiting, only a commit of at most
  /// ``oneSlotBytes`` is written here, and only while `poll` finds a free slot.
  func writeDirectly(_ lines: [Outgoing], estimatedBytes: Int) -> Bool {
    let withoutWaiting = writesWithoutWaiting.load(ordering: .relaxed)
    let limit = withoutWaiting ? pipeCapacity : min(pipeCapacity, Self.oneSlotBytes)
    guard estimatedBytes <= limit, queue.beginDirectWrite() else { return false }
    guard withoutWaiting || hasFreeSlot() else {
      queue.endDirectWrite(written: 0, broken: false)
      return false
    }
    var bytes = JSONWriter(capacity: estimatedBytes + Self.estimateSlack)
    for line in lines { encode(line, into: &bytes) }
    // Without RWF_NOWAIT, a plain write(2) of what fits one slot, found free, cannot wait
    // (a commit the estimate put under a slot and is not goes to the writer thread whole).
    let (written, failure) = emit(
      bytes, waiting: !withoutWaiting && bytes.count <= Self.oneSlotBytes)
    let broken = failure != 0
    let rest =
      broken || written == bytes.count
      ? [] : bytes.withUnsafeBytes { Array($0[written...]) }
    queue.endDirectWrite(written: written, broken: broken, carrying: rest)
    if broken { onBroken(failure) }
    return true
  }

  /// Whether the pipe has a free page-sized slot: then a write of up to `PIPE_BUF` bytes
  /// cannot wait (`POLLOUT` on a pipe means exactly that).
  private func hasFreeSlot() -> Bool {
    var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
    return poll(&poller, 1, 0) == 1 && poller.revents & Int16(POLLOUT) != 0
  }

  func start() {
    let thread = OSThread(name: "stateserver.stdout") { [self] in run() }
    thread.start()
  }

  /// The bytes encoded and not yet written, and the estimated output they stand for. One
  /// buffer for the thread's life: every line is encoded straight into it.
  private struct Pending: ~Copyable {
    var bytes = JSONWriter(capacity: 1 << 20)
    var estimate = 0
    var broken = false
  }

  private func run() {
    var pending = Pending()
    while case (let carried, var lines, let sizes)? = queue.next() {
      guard !pending.broken else {
        // The client is gone: keep consuming so nothing waits on us.
        queue.release(carried.count + sizes.reduce(0, +), written: 0)
        continue
      }
      // What a direct write could not get into the pipe goes first: it was committed earlier.
      if !carried.isEmpty {
        pending.bytes.append(contentsOf: carried)
        pending.estimate += carried.count
      }
      // Each line is moved out of the batch (a placeholder without references left behind), so
      // the writer owns it: reading it in the array copied it (retaining each of its members)
      // only to release the copy once written, and the array's release again afterwards.
      for index in lines.indices {
        let size = sizes[index]
        let line = exchange(&lines[index], with: .written)
        if case .streamed(let text, _) = line {
          stream(text, id: text.id, estimate: size, into: &pending)
        } else if size > Self.chunkBytes, case .message(.array(let elements), _) = line {
          stream(elements, estimate: size, into: &pending)
        } else if size > Self.chunkBytes, line.isWritable {
          stream(line, estimate: size, into: &pending)
        } else {
          encode(line, into: &pending.bytes)
          pending.estimate += size
          if pending.bytes.count >= Self.chunkBytes { flush(&pending) }
        }
      }
      flush(&pending)
      if pending.bytes.capacity > 16 << 20 { pending.bytes = JSONWriter(capacity: 1 << 20) }
    }
  }

  /// A batch's responses as one line, written out chunk by chunk as it is encoded.
  private func stream(_ elements: [JSON], estimate: Int, into pending: inout Pending) {
    var left = estimate
    pending.bytes.append(UInt8(ascii: "["))
    for (index, element) in elements.enumerated() {
      if index > 0 { pending.bytes.append(UInt8(ascii: ",")) }
      let start = pending.bytes.count
      do {
        try pending.bytes.write(element)
      } catch {
        encodeFailure(of: element["id"], error, into: &pending.bytes)
        if pending.bytes.count > start {
          // its newline: this is an element, not a line
          pending.bytes.truncate(to: pending.bytes.count - 1)
        } else {
          pending.bytes.append("null")
        }
      }
      if pending.bytes.count >= Self.chunkBytes {
        let share = min(left, pending.bytes.count)
        left -= share
        pending.estimate += share
        flush(&pending)
      }
    }
    pending.bytes.append("]\n")
    pending.estimate += left
  }

  /// One line larger than a chunk (a `store/open` or `state/get` of a large state, a patch
  /// that adds a large value), written out while it is encoded: its text is never whole in
  /// memory, only about one buffer of it. It was checked first (``Outgoing/isWritable``):
  /// bytes written out cannot be taken back, so a line that would fail halfway (a NaN in a
  /// state) goes the usual way and is answered with an error instead.
  private func stream(_ line: Outgoing, estimate: Int, into pending: inout Pending) {
    // Through a pipe of the default 64 KB, such a line went out 64 KB a write, each a wake-up
    // of this thread and of the reader; a larger pipe (1 MiB, the most an unprivileged process
    // may ask by default) takes it in a sixteenth of the writes. Once per large line: a call
    // that finds the pipe large enough already changes nothing. `pipeCapacity` keeps the size
    // found at start, which only makes direct writes more careful than they need be.
    if pipeCapacity > 0 { cposix_widen_pipe(fd, 1 << 20) }
    var left = estimate
    var broken = pending.broken
    pending.bytes.write(handingOnAt: Self.chunkBytes) { bytes in
      if bytes.count > largestBuffer.load(ordering: .relaxed) {
        largestBuffer.store(bytes.count, ordering: .relaxed)
      }
      var written = 0
      if !broken {
        let failure: Int32
        (written, failure) = emit(bytes, waiting: true)
        if written < bytes.count {
          broken = true
          queue.markBroken()
          onBroken(failure)
        }
      }
      let share = min(left, bytes.count)
      left -= share
      queue.release(share, written: written)
    } _: { writer in
      encode(line, into: &writer)
    }
    pending.broken = broken
    pending.estimate += left
  }

  /// A line written while it is sent (``StreamedText``): each piece goes out as the state
  /// actor hands it on, so its text is never whole here. A response's head (`id`; a patch's
  /// text is its whole line) goes out with the first piece, so a text that fails before any
  /// piece is answered by its replacement alone; one that fails later has begun a line that
  /// cannot be taken back: the line ends where it was cut (no parser accepts it), and the
  /// replacement follows on a line of its own (a patch has none).
  private func stream(_ text: StreamedText, id: JSON?, estimate: Int, into pending: inout Pending) {
    if pipeCapacity > 0 { cposix_widen_pipe(fd, 1 << 20) }
    pending.estimate += estimate
    var started = false
    while true {
      let (pieces, ending) = text.take()
      for piece in pieces {
        if !started {
          started = true
          if let id { writeHead(id: id, to: &pending.bytes) }
          flush(&pending)
        }
        send(piece, pending: &pending)
      }
      switch ending {
      case nil:
        continue
      case .finished:
        if let id {
          if !started { writeHead(id: id, to: &pending.bytes) }
          pending.bytes.append(UInt8(ascii: "}"))
        }
        pending.bytes.append(0x0A)
      case .failed(let replacement):
        if started { pending.bytes.append(0x0A) }
        if let replacement { encode(replacement, into: &pending.bytes) }
      }
      if pending.bytes.count >= Self.chunkBytes { flush(&pending) }
      return
    }
  }

  /// A streamed response's head. Its id was read from the request, where the router accepts
  /// only a string, a number or null: JSON it was, so JSON it can be written.
  private func writeHead(id: JSON, to bytes: inout JSONWriter) {
    try? Outgoing.writeResultHead(id: id, to: &bytes)
  }

  /// Writes one piece of a streamed response as it is, without copying it into the buffer.
  private func send(_ piece: [UInt8], pending: inout Pending) {
    var written = 0
    if !pending.broken {
      let failure: Int32
      (written, failure) = piece.withUnsafeBytes { emit($0, waiting: true) }
      if written < piece.count {
        pending.broken = true
        queue.markBroken()
        onBroken(failure)
      }
    }
    queue.release(piece.count, written: written)
  }

  private func flush(_ pending: inout Pending) {
    if pending.bytes.count > largestBuffer.load(ordering: .relaxed) {
      largestBuffer.store(pending.bytes.count, ordering: .relaxed)
    }
    var written = 0
    if !pending.broken && pending.bytes.count > 0 {
      let failure: Int32
      (written, failure) = emit(pending.bytes, waiting: true)
      if written < pending.bytes.count {
        pending.broken = true
        queue.markBroken()
        onBroken(failure)
      }
    }
    queue.release(pending.estimate, written: written)
    pending.estimate = 0
    pending.bytes.truncate(to: 0)
  }

  private func encode(_ line: Outgoing, into bytes: inout JSONWriter) {
    do {
      try line.write(to: &bytes)
    } catch {
      encodeFailure(of: line.responseID, error, into: &bytes)
    }
  }

  /// A value JSON cannot express (a NaN in a state): a response still gets an answer.
  private func encodeFailure(of id: JSON?, _ error: JSONWriteError, into bytes: inout JSONWriter) {
    log.error("cannot encode an outgoing message", ["reason": error.description])
    guard let id else { return }
    let reason = "the result cannot be written as JSON: \(error.reason)"
    try? Outgoing.failure(id: id, error: .internalError(reason)).write(to: &bytes)
  }

  /// Writes `bytes` to stdout: all of them, however long the pipe makes it wait (`waiting`), or
  /// as many as the pipe takes now. Returns how many went out and the `errno` of a failure that
  /// ends the output; 0 when there was none (when not waiting, the pipe may have been full, or
  /// the kernel unable to write to it without waiting: the rest then goes to the writer thread).
  private func emit(_ bytes: borrowing JSONWriter, waiting: Bool) -> (written: Int, errno: Int32) {
    bytes.withUnsafeBytes { raw in emit(raw, waiting: waiting) }
  }

  private func emit(_ raw: UnsafeRawBufferPointer, waiting: Bool) -> (written: Int, errno: Int32) {
    do {
      guard let base = raw.baseAddress else { return (0, 0) }
      var offset = 0
      while offset < raw.count {
        let written =
          waiting
          ? write(fd, base + offset, raw.count - offset)
          : cposix_write_nowait(fd, base + offset, raw.count - offset)
        if written >= 0 {
          offset += written
          continue
        }
        switch errno {
        case EINTR:
          continue
        case EAGAIN where waiting:
          // Someone sharing stdout made it non-blocking: wait for room ourselves.
          var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
          _ = poll(&poller, 1, -1)
        case EAGAIN:
          return (offset, 0)
        case EOPNOTSUPP where !waiting, ENOSYS where !waiting, EINVAL where !waiting:
          writesWithoutWaiting.store(false, ordering: .relaxed)
          return (offset, 0)
        case let failure:
          return (offset, failure)
        }
      }
      return (offset, 0)
    }
  }
}

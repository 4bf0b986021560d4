import CHook
import Dispatch
#if canImport(Glibc)
  import Glibc
#endif

nonisolated(unsafe) let work = Work()

let mode = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : "c"

@MainActor func serveOnMain(_ lines: [[UInt8]]) {
  if useEffect {
    for line in lines {
      Task { @MainActor in
        _ = await effect(1)
        work.serve(line)
        work.flush()
      }
    }
  } else {
    for line in lines { work.serve(line) }
    work.flush()
  }
}

@LoopActor func serveOnLoop(_ lines: [[UInt8]]) {
  if useEffect {
    for line in lines {
      Task { @LoopActor in
        _ = await effect(1)
        work.serve(line)
        work.flush()
      }
    }
  } else {
    for line in lines { work.serve(line) }
    work.flush()
  }
}

switch mode {
case "b":  // reader thread + dispatchMain()
  startThread {
    let framer = Framer()
    while let lines = framer.read(fd: 0) {
      DispatchQueue.main.async { MainActor.assumeIsolated { serveOnMain(lines) } }
    }
    DispatchQueue.main.async { exit(0) }
  }
  dispatchMain()
case "d":  // main thread polls stdin and the main queue's private handle
  let handle = chook_handle()
  _ = fcntl(handle, F_SETFL, fcntl(handle, F_GETFL) | O_NONBLOCK)
  var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: handle, events: Int16(POLLIN), revents: 0)]
  let framer = Framer()
  chook_drain()
  while true {
    fds[0].revents = 0; fds[1].revents = 0
    if poll(&fds, 2, -1) < 0 { continue }
    if fds[0].revents != 0 {
      guard let lines = framer.read(fd: 0) else { exit(0) }
      serveOnMain(lines)
    }
    if fds[1].revents != 0 {
      var value: UInt64 = 0
      _ = read(handle, &value, 8)
      chook_drain()
    }
  }
default:  // "c": custom global actor run by the main thread's poll loop
  let executor = LoopActor.executor
  executor.loopThread.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .relaxed)
  var fds = [pollfd(fd: 0, events: Int16(POLLIN), revents: 0), pollfd(fd: executor.wake, events: Int16(POLLIN), revents: 0)]
  let framer = Framer()
  while true {
    fds[0].revents = 0; fds[1].revents = 0
    if poll(&fds, 2, -1) < 0 { continue }
    if fds[0].revents != 0 {
      guard let lines = framer.read(fd: 0) else { exit(0) }
      LoopActor.assumeIsolated { serveOnLoop(lines) }
    }
    if fds[1].revents != 0 {
      var sink = (UInt64(0), UInt64(0))
      _ = read(executor.wake, &sink, 16)
    }
    executor.drain()
  }
}

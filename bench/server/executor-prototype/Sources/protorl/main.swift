import Foundation
#if canImport(Glibc)
  import Glibc
#endif

nonisolated(unsafe) let work = Work()

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

// (a): reader thread + RunLoop.main.run() (CoreFoundation drains the main queue on the main thread)
startThread {
  let framer = Framer()
  while let lines = framer.read(fd: 0) {
    DispatchQueue.main.async { MainActor.assumeIsolated { serveOnMain(lines) } }
  }
  DispatchQueue.main.async { exit(0) }
}
RunLoop.main.run()
exit(0)

import Foundation
import Testing

@testable import StateServer

#if canImport(Glibc)
  import Glibc
#endif

@Suite struct ListenAddressTests {
  let interface = CommandLineInterface(
    name: "stateserver", version: "9.9.9", summary: "s", flags: ServerOptions.flags)

  func listen(_ arguments: [String]) -> ListenAddress? {
    guard case .run(let options) = interface.parse(arguments, into: ServerOptions()) else {
      Issue.record("expected options for \(arguments)")
      return nil
    }
    return options.listen
  }

  @Test func listenTakesAnOptionalPath() {
    #expect(listen([]) == nil)
    #expect(listen(["--listen"]) == .defaultPath)
    #expect(listen(["--listen", "--ephemeral"]) == .defaultPath)
    #expect(listen(["--listen", "/run/core.sock"]) == .path("/run/core.sock"))
    #expect(listen(["--listen=/run/core.sock", "--ephemeral"]) == .path("/run/core.sock"))
    #expect(interface.help.contains("--listen [PATH]"))
  }

  /// A fresh directory of `mode` under the temporary directory.
  func directory(mode: mode_t) throws -> String {
    let path = NSTemporaryDirectory() + "listen-\(UUID().uuidString)"
    try #require(mkdir(path, 0o700) == 0)
    try #require(chmod(path, mode) == 0)
    return path
  }

  @Test func theDefaultPathIsInAPrivateDirectoryNamedForThePID() throws {
    let runtime = try directory(mode: 0o700)
    defer { try? FileManager.default.removeItem(atPath: runtime) }
    let path = try ListenAddress.defaultPath.resolve(
      environment: ["XDG_RUNTIME_DIR": runtime], pid: 4242, uid: getuid())
    #expect(path == runtime + "/stateserver/4242.sock")
    var info = stat()
    #expect(stat(runtime + "/stateserver", &info) == 0)
    #expect(info.st_mode & 0o777 == 0o700)
  }

  @Test func aDirectoryOthersCanWriteIsRefused() throws {
    let shared = try directory(mode: 0o777)
    defer { try? FileManager.default.removeItem(atPath: shared) }
    #expect {
      try ListenAddress.path(shared + "/core.sock").resolve()
    } throws: { error in
      (error as? UnixSocket.Failure)?.message.contains("writable by group or others") == true
    }
    #expect(throws: (any Error).self) {
      try ListenAddress.path(try directory(mode: 0o770) + "/core.sock").resolve()
    }
  }

  @Test func aDefaultDirectoryOfAnotherUserIsRefused() throws {
    let runtime = try directory(mode: 0o700)
    defer { try? FileManager.default.removeItem(atPath: runtime) }
    #expect {
      try ListenAddress.defaultPath.resolve(
        environment: ["XDG_RUNTIME_DIR": runtime], pid: 1, uid: getuid() &+ 1)
    } throws: { error in
      (error as? UnixSocket.Failure)?.message.contains("belongs to uid") == true
    }
  }
}

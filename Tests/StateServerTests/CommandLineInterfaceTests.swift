import Testing

@testable import StateServer

@Suite struct CommandLineInterfaceTests {
  let interface = CommandLineInterface(
    name: "stateserver", version: "9.9.9", summary: "s", flags: ServerOptions.flags)

  @Test func valuesAreParsedInBothSpellings() {
    guard
      case .run(let options) = interface.parse(
        [
          "--max-message-bytes=1024", "--drain-timeout", "0.5", "--ephemeral", "--log-format",
          "json",
        ],
        into: ServerOptions())
    else {
      Issue.record("expected options")
      return
    }
    #expect(options.maxMessageBytes == 1024)
    #expect(options.drainTimeout == .milliseconds(500))
    #expect(options.ephemeral)
    #expect(options.logFormat == .json)
  }

  @Test func anUnknownFlagIsAUsageError() {
    guard case .usageError(let message) = interface.parse(["--nope"], into: ServerOptions()) else {
      Issue.record("expected a usage error")
      return
    }
    #expect(message.contains("unknown option '--nope'"))
  }

  @Test func aBadValueNamesTheFlag() {
    guard
      case .usageError(let message) = interface.parse(
        ["--log-level", "loud"], into: ServerOptions())
    else {
      Issue.record("expected a usage error")
      return
    }
    #expect(message.contains("--log-level"))
  }

  @Test func versionAndHelpPrint() {
    guard case .print(let version) = interface.parse(["--version"], into: ServerOptions()),
      case .print(let help) = interface.parse(["--help"], into: ServerOptions())
    else {
      Issue.record("expected printing")
      return
    }
    #expect(version == "stateserver 9.9.9\n")
    #expect(help.contains("--drain-timeout SECONDS"))
  }

  /// The server's flags name the executable in their help: an application's help names the
  /// application, the reference executable's names stateserver.
  @Test func theServersFlagsNameTheExecutableInTheirHelp() {
    func help(_ name: String) -> String {
      let line = Server.commandLine(
        name: name, version: "1", summary: nil, server: \ServerOptions.self,
        flags: [Flag<ServerOptions>]())
      guard case .print(let text) = line.parse(["--help"], into: ServerOptions()) else {
        Issue.record("expected printing")
        return ""
      }
      return text
    }
    #expect(help("timers").contains("`timers attach PATH`"))
    #expect(!help("timers").contains("`stateserver attach"))
    #expect(help("stateserver").contains("`stateserver attach PATH`"))
  }
}

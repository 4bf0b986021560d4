import JSON
import StateKit
import Testing

@testable import StateServer

/// `Server.main`'s command line, seen through `Server.launch`, and the application's own name
/// and version on the wire.
@StateActor
@Suite struct ServerMainTests {
  func launch(_ arguments: [String]) -> Server.Launch {
    Server.launch(
      name: "timers", version: "2.3.4", options: ServerOptions(), server: \.self,
      arguments: arguments, features: { _ in [ScriptedStore.descriptor] })
  }

  @Test func theServersFlagsAreParsedAndTheApplicationNamesItself() {
    guard case .serve(let server, _) = launch(["--ephemeral", "--history", "7"]) else {
      Issue.record("expected a server to run")
      return
    }
    #expect(server.options.ephemeral)
    #expect(server.options.historyLimit == 7)
    #expect(server.options.name == "timers")
    #expect(server.options.version == "2.3.4")
    #expect(server.features.map(\.name) == [ScriptedStore.descriptor.name])
    // --ephemeral: nothing persists.
    #expect(server.persistence() == nil)
  }

  @Test func aFeatureWhoseActionNamesClashIsRefusedAtRegistration() throws {
    let clashing = Clashing().descriptor()
    let refusal = try #require(Server.refusal(of: [ScriptedStore.descriptor, clashing]))
    #expect(refusal.hasPrefix("feature clashing refused: /actions/save: feature clashing: "))
    #expect(refusal.contains("\"save\" is both a case of"))
    #expect(Server.refusal(of: [ScriptedStore.descriptor]) == nil)
    let launched = Server.launch(
      name: "timers", version: "1", options: ServerOptions(), server: \.self,
      arguments: ["--ephemeral"], features: { _ in [clashing] })
    guard case .exit(let status) = launched else {
      Issue.record("expected the server to refuse the feature")
      return
    }
    #expect(status == 1)
  }

  @Test func theHelpNamesTheApplication() {
    let help = Server.commandLine(
      name: "timers", version: "2.3.4", summary: nil, server: \ServerOptions.self, flags: []
    ).help
    #expect(help.hasPrefix("timers 2.3.4: "))
    #expect(help.contains("`timers attach PATH`"))
    #expect(!help.contains("`stateserver"))
  }

  @Test func anUnknownFlagExitsTwo() {
    guard case .exit(let status) = launch(["--nope"]) else {
      Issue.record("expected an exit")
      return
    }
    #expect(status == 2)
  }

  @Test func theApplicationsOwnFlagsFollowTheServers() {
    struct AppOptions: Sendable {
      var server = ServerOptions()
      var speed = 1
    }
    let speed = Flag<AppOptions>("--speed", value: "N", help: "how fast") {
      (options, value) throws(UsageError) in
      options.speed = try FlagValue.integer(value, of: "--speed")
    }
    var seen: Int?
    let launched = Server.launch(
      name: "timers", version: "1", options: AppOptions(), server: \.server, flags: [speed],
      arguments: ["--speed", "3", "--ephemeral"],
      features: { options in
        seen = options.speed
        return []
      })
    guard case .serve(let server, _) = launched else {
      Issue.record("expected a server to run")
      return
    }
    #expect(seen == 3)
    #expect(server.options.ephemeral)
  }

  @Test func initializeAndDiscoverReportTheApplication() throws {
    var options = ServerOptions()
    options.name = "timers"
    options.version = "2.3.4"
    let harness = try Harness(options: options)
    let lines = try harness.send(
      #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"subscribe":"none"}}"#,
      #"{"jsonrpc":"2.0","id":2,"method":"rpc.discover"}"#)
    #expect(lines[0]["result"]?["server"] == ["name": "timers", "version": "2.3.4"])
    #expect(lines[1]["result"]?["info"]?["title"] == "timers")
    #expect(lines[1]["result"]?["info"]?["version"] == "2.3.4")
  }
}

/// A public and an internal action of the same wire name: `{"type": "save"}` would mean two.
private struct Clashing: Feature {
  struct State: Codable, Equatable, Sendable {}
  enum Action: Codable, Sendable, EmbedsInternalActions {
    case save
    case `internal`(Internal)
    enum Internal: Codable, Sendable { case save }
  }
  static let name = "clashing"
  var initialState: State { State() }
  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> { .none }
}

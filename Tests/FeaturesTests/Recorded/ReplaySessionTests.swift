// Emitted by `stateserver replay --emit swift` from the recording tests/recordings/replay-session.ndjson.
//
// Serves the application's features in-process (`ServerTestHarness`: the server's own
// connection, on a virtual clock, with `--history 1000`), sends each recorded request
// in order (each dispatch, and a clock/advance to when each effect's action was recorded)
// and expects every line it is answered with to equal the recorded one: each response at
// its step, each store's state/patch and store/event lines in their order (through
// `ServerTestHarness.loose`: the values of `at` and `durationUs`, and ISO 8601 timestamps,
// which read the wall clock, differ on every run and only have to be present).
//
// The test target defines, once, the features as the application's executable builds them:
// `func applicationFeatures(clock: ServerClock) -> [FeatureDescriptor]`.
import StateKit
import StateServer
import Testing

@StateActor @Test func replaysReplaySession() async throws {
  var options = ServerOptions()
  options.historyLimit = 1000
  let harness = try ServerTestHarness(options: options, features: applicationFeatures(clock:))
  defer { harness.close() }
  let differences = try await harness.replay(replaySessionSteps)
  #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
}

let replaySessionSteps: [ServerTestHarness.Step] = [
  .init(
    #"{"jsonrpc":"2.0","id":1,"method":"dispatch","params":{"store":"counter","action":{"type":"increment"}}}"#,
    expecting: [
      #"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"counter","from":0,"to":1,"patch":[{"op":"replace","path":"/count","value":1}],"cause":1}}"#,
      #"{"jsonrpc":"2.0","id":1,"result":{"store":"counter","version":1}}"#,
    ]),
  .init(
    #"{"jsonrpc":"2.0","id":2,"method":"dispatch","params":{"store":"cart","action":{"type":"add","id":"a","name":"Apple","price":3}}}"#,
    expecting: [
      #"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"cart","from":0,"to":1,"patch":[{"op":"add","path":"/items/0","value":{"id":"a","name":"Apple","price":3,"quantity":1}},{"op":"replace","path":"/total","value":3},{"op":"replace","path":"/badgeCount","value":1}],"cause":2}}"#,
      #"{"jsonrpc":"2.0","id":2,"result":{"store":"cart","version":1}}"#,
    ]),
  .init(
    #"{"jsonrpc":"2.0","id":3,"method":"dispatch","params":{"store":"users","action":{"type":"load"}}}"#,
    expecting: [
      #"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"users","from":0,"to":1,"patch":[{"op":"replace","path":"/load/status","value":"loading"}],"cause":3}}"#,
      #"{"jsonrpc":"2.0","id":3,"result":{"store":"users","version":1}}"#,
    ]),
  .init(
    #"{"jsonrpc":"2.0","id":"clock/advance 1","method":"clock/advance","params":{"ms":0}}"#,
    expecting: [
      #"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"backend","from":0,"to":1,"patch":[{"op":"add","path":"/requests/listUsers","value":1}]}}"#,
      #"{"jsonrpc":"2.0","id":"clock/advance 1","result":{"clock":"virtual","now":0}}"#,
    ]),
  .init(
    #"{"jsonrpc":"2.0","id":"clock/advance 2","method":"clock/advance","params":{"ms":50}}"#,
    expecting: [
      #"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"users","from":1,"to":2,"patch":[{"op":"replace","path":"/load/status","value":"loaded"},{"op":"replace","path":"/load/lastUpdated","value":"2026-12-05T00:54:45.252Z"},{"op":"replace","path":"/load/expiresAt","value":"2026-12-05T00:59:45.252Z"},{"op":"replace","path":"/source","value":"network"},{"op":"replace","path":"/users","value":[{"id":1,"name":"Ada Abara","email":"ada.abara@example.com","version":1},{"id":2,"name":"Callum Hansen","email":"callum.hansen@example.com","version":1},{"id":3,"name":"Carla Okafor","email":"carla.okafor@example.com","version":1},{"id":4,"name":"Dmitri Becker","email":"dmitri.becker@example.com","version":1},{"id":5,"name":"Elena Ito","email":"elena.ito@example.com","version":1},{"id":6,"name":"Farid Petrov","email":"farid.petrov@example.com","version":1},{"id":7,"name":"Grace Castro","email":"grace.castro@example.com","version":1},{"id":8,"name":"Hiro Jensen","email":"hiro.jensen@example.com","version":1},{"id":9,"name":"Ines Quinn","email":"ines.quinn@example.com","version":1},{"id":10,"name":"Jonas Dubois","email":"jonas.dubois@example.com","version":1},{"id":11,"name":"Kemi Kowalski","email":"kemi.kowalski@example.com","version":1},{"id":12,"name":"Liam Rossi","email":"liam.rossi@example.com","version":1},{"id":13,"name":"Mara Eriksen","email":"mara.eriksen@example.com","version":1},{"id":14,"name":"Nadia Lopez","email":"nadia.lopez@example.com","version":1},{"id":15,"name":"Omar Sato","email":"omar.sato@example.com","version":1},{"id":16,"name":"Priya Fischer","email":"priya.fischer@example.com","version":1},{"id":17,"name":"Quentin Moreau","email":"quentin.moreau@example.com","version":1},{"id":18,"name":"Rosa Tanaka","email":"rosa.tanaka@example.com","version":1},{"id":19,"name":"Sven Garcia","email":"sven.garcia@example.com","version":1},{"id":20,"name":"Tara Novak","email":"tara.novak@example.com","version":1},{"id":21,"name":"Ugo Abara","email":"ugo.abara@example.com","version":1},{"id":22,"name":"Vera Hansen","email":"vera.hansen@example.com","version":1},{"id":23,"name":"Wen Okafor","email":"wen.okafor@example.com","version":1},{"id":24,"name":"Ximena Becker","email":"ximena.becker@example.com","version":1},{"id":25,"name":"Yusuf Ito","email":"yusuf.ito@example.com","version":1},{"id":26,"name":"Ada Petrov","email":"ada.petrov@example.com","version":1},{"id":27,"name":"Callum Castro","email":"callum.castro@example.com","version":1},{"id":28,"name":"Carla Jensen","email":"carla.jensen@example.com","version":1},{"id":29,"name":"Dmitri Quinn","email":"dmitri.quinn@example.com","version":1},{"id":30,"name":"Elena Dubois","email":"elena.dubois@example.com","version":1},{"id":31,"name":"Farid Kowalski","email":"farid.kowalski@example.com","version":1},{"id":32,"name":"Grace Rossi","email":"grace.rossi@example.com","version":1},{"id":33,"name":"Hiro Eriksen","email":"hiro.eriksen@example.com","version":1},{"id":34,"name":"Ines Lopez","email":"ines.lopez@example.com","version":1},{"id":35,"name":"Jonas Sato","email":"jonas.sato@example.com","version":1},{"id":36,"name":"Kemi Fischer","email":"kemi.fischer@example.com","version":1},{"id":37,"name":"Liam Moreau","email":"liam.moreau@example.com","version":1},{"id":38,"name":"Mara Tanaka","email":"mara.tanaka@example.com","version":1},{"id":39,"name":"Nadia Garcia","email":"nadia.garcia@example.com","version":1},{"id":40,"name":"Omar Novak","email":"omar.novak@example.com","version":1},{"id":41,"name":"Priya Abara","email":"priya.abara@example.com","version":1},{"id":42,"name":"Quentin Hansen","email":"quentin.hansen@example.com","version":1},{"id":43,"name":"Rosa Okafor","email":"rosa.okafor@example.com","version":1},{"id":44,"name":"Sven Becker","email":"sven.becker@example.com","version":1},{"id":45,"name":"Tara Ito","email":"tara.ito@example.com","version":1},{"id":46,"name":"Ugo Petrov","email":"ugo.petrov@example.com","version":1},{"id":47,"name":"Vera Castro","email":"vera.castro@example.com","version":1},{"id":48,"name":"Wen Jensen","email":"wen.jensen@example.com","version":1},{"id":49,"name":"Ximena Quinn","email":"ximena.quinn@example.com","version":1},{"id":50,"name":"Yusuf Dubois","email":"yusuf.dubois@example.com","version":1}]},{"op":"replace","path":"/results","value":[{"id":1,"name":"Ada Abara","email":"ada.abara@example.com","version":1},{"id":2,"name":"Callum Hansen","email":"callum.hansen@example.com","version":1},{"id":3,"name":"Carla Okafor","email":"carla.okafor@example.com","version":1},{"id":4,"name":"Dmitri Becker","email":"dmitri.becker@example.com","version":1},{"id":5,"name":"Elena Ito","email":"elena.ito@example.com","version":1},{"id":6,"name":"Farid Petrov","email":"farid.petrov@example.com","version":1},{"id":7,"name":"Grace Castro","email":"grace.castro@example.com","version":1},{"id":8,"name":"Hiro Jensen","email":"hiro.jensen@example.com","version":1},{"id":9,"name":"Ines Quinn","email":"ines.quinn@example.com","version":1},{"id":10,"name":"Jonas Dubois","email":"jonas.dubois@example.com","version":1},{"id":11,"name":"Kemi Kowalski","email":"kemi.kowalski@example.com","version":1},{"id":12,"name":"Liam Rossi","email":"liam.rossi@example.com","version":1},{"id":13,"name":"Mara Eriksen","email":"mara.eriksen@example.com","version":1},{"id":14,"name":"Nadia Lopez","email":"nadia.lopez@example.com","version":1},{"id":15,"name":"Omar Sato","email":"omar.sato@example.com","version":1},{"id":16,"name":"Priya Fischer","email":"priya.fischer@example.com","version":1},{"id":17,"name":"Quentin Moreau","email":"quentin.moreau@example.com","version":1},{"id":18,"name":"Rosa Tanaka","email":"rosa.tanaka@example.com","version":1},{"id":19,"name":"Sven Garcia","email":"sven.garcia@example.com","version":1},{"id":20,"name":"Tara Novak","email":"tara.novak@example.com","version":1},{"id":21,"name":"Ugo Abara","email":"ugo.abara@example.com","version":1},{"id":22,"name":"Vera Hansen","email":"vera.hansen@example.com","version":1},{"id":23,"name":"Wen Okafor","email":"wen.okafor@example.com","version":1},{"id":24,"name":"Ximena Becker","email":"ximena.becker@example.com","version":1},{"id":25,"name":"Yusuf Ito","email":"yusuf.ito@example.com","version":1},{"id":26,"name":"Ada Petrov","email":"ada.petrov@example.com","version":1},{"id":27,"name":"Callum Castro","email":"callum.castro@example.com","version":1},{"id":28,"name":"Carla Jensen","email":"carla.jensen@example.com","version":1},{"id":29,"name":"Dmitri Quinn","email":"dmitri.quinn@example.com","version":1},{"id":30,"name":"Elena Dubois","email":"elena.dubois@example.com","version":1},{"id":31,"name":"Farid Kowalski","email":"farid.kowalski@example.com","version":1},{"id":32,"name":"Grace Rossi","email":"grace.rossi@example.com","version":1},{"id":33,"name":"Hiro Eriksen","email":"hiro.eriksen@example.com","version":1},{"id":34,"name":"Ines Lopez","email":"ines.lopez@example.com","version":1},{"id":35,"name":"Jonas Sato","email":"jonas.sato@example.com","version":1},{"id":36,"name":"Kemi Fischer","email":"kemi.fischer@example.com","version":1},{"id":37,"name":"Liam Moreau","email":"liam.moreau@example.com","version":1},{"id":38,"name":"Mara Tanaka","email":"mara.tanaka@example.com","version":1},{"id":39,"name":"Nadia Garcia","email":"nadia.garcia@example.com","version":1},{"id":40,"name":"Omar Novak","email":"omar.novak@example.com","version":1},{"id":41,"name":"Priya Abara","email":"priya.abara@example.com","version":1},{"id":42,"name":"Quentin Hansen","email":"quentin.hansen@example.com","version":1},{"id":43,"name":"Rosa Okafor","email":"rosa.okafor@example.com","version":1},{"id":44,"name":"Sven Becker","email":"sven.becker@example.com","version":1},{"id":45,"name":"Tara Ito","email":"tara.ito@example.com","version":1},{"id":46,"name":"Ugo Petrov","email":"ugo.petrov@example.com","version":1},{"id":47,"name":"Vera Castro","email":"vera.castro@example.com","version":1},{"id":48,"name":"Wen Jensen","email":"wen.jensen@example.com","version":1},{"id":49,"name":"Ximena Quinn","email":"ximena.quinn@example.com","version":1},{"id":50,"name":"Yusuf Dubois","email":"yusuf.dubois@example.com","version":1}]}],"cause":3}}"#,
      #"{"jsonrpc":"2.0","id":"clock/advance 2","result":{"clock":"virtual","now":50}}"#,
    ]),
  .init(
    #"{"jsonrpc":"2.0","id":5,"method":"dispatch","params":{"store":"users","action":{"type":"search","query":"c"}}}"#,
    expecting: [
      #"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"users","from":2,"to":3,"patch":[{"op":"replace","path":"/query","value":"c"},{"op":"replace","path":"/searching","value":true}],"cause":5}}"#,
      #"{"jsonrpc":"2.0","id":5,"result":{"store":"users","version":3}}"#,
    ]),
  .init(
    #"{"jsonrpc":"2.0","id":6,"method":"dispatch","params":{"store":"users","action":{"type":"search","query":"carla"}}}"#,
    expecting: [
      #"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"users","from":3,"to":4,"patch":[{"op":"replace","path":"/query","value":"carla"}],"cause":6}}"#,
      #"{"jsonrpc":"2.0","id":6,"result":{"store":"users","version":4}}"#,
    ]),
  .init(
    #"{"jsonrpc":"2.0","id":"clock/advance 3","method":"clock/advance","params":{"ms":300}}"#,
    expecting: [
      #"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"backend","from":1,"to":2,"patch":[{"op":"add","path":"/requests/searchUsers","value":1}]}}"#,
      #"{"jsonrpc":"2.0","id":"clock/advance 3","result":{"clock":"virtual","now":350}}"#,
    ]),
  .init(
    #"{"jsonrpc":"2.0","id":"clock/advance 4","method":"clock/advance","params":{"ms":50}}"#,
    expecting: [
      #"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"users","from":4,"to":5,"patch":[{"op":"replace","path":"/results","value":[{"id":3,"name":"Carla Okafor","email":"carla.okafor@example.com","version":1},{"id":28,"name":"Carla Jensen","email":"carla.jensen@example.com","version":1}]},{"op":"replace","path":"/searching","value":false}],"cause":6}}"#,
      #"{"jsonrpc":"2.0","id":"clock/advance 4","result":{"clock":"virtual","now":400}}"#,
    ]),
  .init(
    #"{"jsonrpc":"2.0","id":9,"method":"dispatch","params":{"store":"counter","action":{"type":"incrementLater","afterMs":10}}}"#,
    expecting: [
      #"{"jsonrpc":"2.0","id":9,"result":{"store":"counter","version":1}}"#
    ]),
  .init(
    #"{"jsonrpc":"2.0","id":"clock/advance 5","method":"clock/advance","params":{"ms":10}}"#,
    expecting: [
      #"{"jsonrpc":"2.0","method":"state/patch","params":{"store":"counter","from":1,"to":2,"patch":[{"op":"replace","path":"/count","value":2}],"cause":9}}"#,
      #"{"jsonrpc":"2.0","id":"clock/advance 5","result":{"clock":"virtual","now":410}}"#,
    ]),
]

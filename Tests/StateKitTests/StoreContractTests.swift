import JSON
import StateKitTesting
import Testing

@testable import StateKit

/// The `Store` as the server drives it: through `AnyStore` and `FeatureDescriptor`.
@StateActor
@Suite struct StoreContractTests {
  private func makeStore(_ feature: some Feature, initial: JSON? = nil) throws -> any AnyStore {
    try feature.descriptor().makeStore("s1", initial, nil)
  }

  @Test func publicationsComeInOrderAndChainVersions() throws {
    let store = try makeStore(Counter())
    var seen: [Publication] = []
    store.observer = { seen.append($0) }
    _ = try store.send(wire: ["type": "increment"], cause: 1)
    _ = try store.send(wire: ["type": "set", "value": 10], cause: 2)
    #expect(seen.map(\.cause) == [1, 2])
    #expect(seen.map(\.from) == [0, 1])
    #expect(seen.map(\.to) == [1, 2])
    #expect(seen.allSatisfy { $0.store == "s1" })
  }

  @Test func everyPatchTurnsThePreviousViewIntoTheNewOne() throws {
    let store = try makeStore(Counter())
    var document = store.published
    #expect(document == ["count": 0, "isEven": true])
    store.observer = { publication in
      do {
        try JSONPatch(json: .array(publication.patch)).apply(to: &document)
      } catch {
        Issue.record("patch does not apply: \(error)")
      }
      #expect(document == store.published)
    }
    for wire: JSON in [["type": "increment"], ["type": "set", "value": 7], ["type": "decrement"]] {
      _ = try store.send(wire: wire, cause: nil)
    }
    #expect(document == ["count": 6, "isEven": true])
  }

  @Test func eventsArePublishedAsWireObjectsWithTheirAction() throws {
    let store = try makeStore(Counter())
    var seen: [Publication] = []
    store.observer = { seen.append($0) }
    _ = try store.send(wire: ["type": "set", "value": 9], cause: nil)
    _ = try store.send(wire: ["type": "increment"], cause: "req")
    #expect(seen.last?.events == [["type": "milestone", "count": 10]])
    #expect(seen.last?.cause == "req")
  }

  @Test func anUnknownOrInternalTypeIsRefused() throws {
    let store = try makeStore(Counter())
    #expect(
      throws: ActionError.refused(
        type: "reset", reason: "\"reset\" is not an action clients may send")
    ) {
      try store.send(wire: ["type": "reset"], cause: nil)
    }
    #expect {
      try store.send(wire: ["type": "explode"], cause: nil)
    } throws: { error in
      if case .refused(let type, _) = error as? ActionError { return type == "explode" }
      return false
    }
    #expect(store.version == 0)
  }

  /// Payload-free actions are decoded once per store and remembered: a remembered one must
  /// reduce every time, and a refused or incomplete one must be refused every time.
  @Test func repeatedPayloadFreeActionsReduceEachTimeAndRefusalsAreNotRemembered() throws {
    let store = try makeStore(Counter())
    for _ in 0..<3 {
      _ = try store.send(wire: ["type": "increment"], cause: nil)
      #expect(throws: ActionError.self) { try store.send(wire: ["type": "reset"], cause: nil) }
      #expect {
        try store.send(wire: ["type": "set"], cause: nil)
      } throws: { error in
        if case .invalid(let pointer, _) = error as? ActionError { return pointer == "/value" }
        return false
      }
    }
    _ = try store.send(wire: ["type": "decrement"], cause: nil)
    #expect(store.published == ["count": 2, "isEven": true])
    #expect(store.version == 4)
  }

  @Test func aMissingOrMistypedFieldIsInvalidWithItsPointer() throws {
    let store = try makeStore(Counter())
    for (wire, pointer): (JSON, String) in [
      (["value": 1], "/type"),
      (["type": 3], "/type"),
      (["type": "set"], "/value"),
      (["type": "set", "value": "many"], "/value"),
      (["type": "set", "value": -1], "/value"),  // refused by the feature's validate
      ("increment", ""),
    ] {
      #expect {
        try store.send(wire: wire, cause: nil)
      } throws: { error in
        guard case .invalid(let got, let reason) = error as? ActionError else { return false }
        return got == pointer && !reason.isEmpty
      }
    }
    #expect(store.version == 0)
  }

  @Test func theInitialStateIsAMergePatchOverTheFeaturesOwn() throws {
    let store = try makeStore(Counter(), initial: ["count": 4])
    #expect(store.published == ["count": 4, "isEven": true])
    #expect(store.snapshot == ["count": 4, "secret": "not published"])
    #expect {
      try makeStore(Counter(), initial: ["count": "four"])
    } throws: { error in
      if case .invalid(let pointer, _) = error as? ActionError { return pointer == "/count" }
      return false
    }
  }

  @Test func aSnapshotRestoresStateAndVersion() throws {
    let original = try makeStore(Counter())
    _ = try original.send(wire: ["type": "set", "value": 5], cause: nil)
    _ = try original.send(wire: ["type": "increment"], cause: nil)
    let restored = try Counter().descriptor().makeStore(
      "s2", nil, (state: original.snapshot, version: original.version))
    #expect(restored.version == 2)
    #expect(restored.published == original.published)
    _ = try restored.send(wire: ["type": "increment"], cause: nil)
    #expect(restored.version == 3)
  }

  /// Regression (qa, 19:40): a snapshot taken while a save was in flight came back `idle`
  /// under the same version, so one version named two states. `Saver` does not say whether its
  /// decoding changed anything, so the store compares the whole state encoded again.
  @Test func aSnapshotThatDecodesDifferentlyResumesAtTheNextVersion() throws {
    let restored = try Saver().descriptor().makeStore(
      "s3", nil, (state: ["status": "saving", "text": "draft"], version: 7))
    #expect(restored.published == ["status": "idle", "text": "draft"])
    #expect(restored.version == 8)
    let settled = try Saver().descriptor().makeStore(
      "s4", nil, (state: ["status": "idle", "text": "draft"], version: 7))
    #expect(settled.version == 7)
  }

  /// A feature that says whether its decoding changed anything is believed, and the whole
  /// state is not compared: `Reporter` fills in a missing `note`, which the whole comparison
  /// would count as a change, but reports only a save it settled.
  @Test func aFeatureThatSaysWhetherItsDecodingChangedTheStateIsBelieved() throws {
    let midSave = try Reporter().descriptor().makeStore(
      "r1", nil, (state: ["status": "saving", "text": "draft"], version: 7))
    #expect(midSave.published == ["status": "idle", "text": "draft", "note": ""])
    #expect(midSave.version == 8)
    let settled = try Reporter().descriptor().makeStore(
      "r2", nil, (state: ["status": "idle", "text": "draft"], version: 7))
    #expect(settled.published == ["status": "idle", "text": "draft", "note": ""])
    #expect(settled.version == 7)
    // The whole comparison would have found a change (the `note` filled in).
    let state = try #require((settled as? Store<Reporter>)?.state)
    #expect(
      !(try JSONValueEncoder().encode(state)).equalsByValue(["status": "idle", "text": "draft"]))
  }

  /// A saved state holding a large array is decoded consuming (its elements' JSON let go as
  /// they are decoded): a feature that says is believed, given the saved state with the array
  /// emptied; one that does not say is taken as changed, nothing being left to compare.
  @Test func aLargeSavedArrayIsDecodedConsumingAndComparedWithoutIt() throws {
    let items: JSON = .array((0..<5).map { .string("item \($0)") })
    try ArrayElision.$threshold.withValue(3) {
      let said = try Lister().descriptor().makeStore(
        "l1", nil, (state: ["status": "idle", "items": items], version: 7))
      #expect(said.published == ["status": "idle", "items": items, "note": ""])
      // Believed: the whole comparison would have counted the `note` filled in.
      #expect(said.version == 7)
      let midSave = try Lister().descriptor().makeStore(
        "l2", nil, (state: ["status": "saving", "items": items], version: 7))
      #expect(midSave.version == 8)
      let silent = try Saver().descriptor().makeStore(
        "s5", nil, (state: ["status": "idle", "text": "draft", "pad": items], version: 7))
      #expect(silent.published == ["status": "idle", "text": "draft"])
      #expect(silent.version == 8)
    }
  }

  @Test func settledWaitsForEveryEffectOfTheTransactionAndWhatItFedBack() async throws {
    let clock = TestClock()
    let backend = ListBackend(clock: clock, script: [.failure(BackendError()), .success(["x"])])
    let store = try makeStore(Loader(backend: backend, clock: clock))
    let transaction = try store.send(wire: ["type": "load"], cause: nil)
    await (store as? Store<Loader>)?.settleEffects()
    let settled = Task { await store.settled(transaction) }
    await clock.advance(by: .seconds(1))  // first attempt fails, a retry is scheduled
    await clock.advance(by: .seconds(1))  // backoff
    await clock.advance(by: .seconds(1))  // second attempt succeeds
    await settled.value
    #expect(store.published["items"] == ["x"])
    await store.idle()
  }

  @Test func closeResolvesWaitersAndIsIdempotent() async throws {
    let clock = TestClock()
    let backend = ListBackend(clock: clock, script: [.success(["x"])])
    let store = try makeStore(Loader(backend: backend, clock: clock))
    let transaction = try store.send(wire: ["type": "load"], cause: nil)
    store.close()
    store.close()
    await store.settled(transaction)
    await store.idle()
    #expect(store.published["load"] == ["loading": [:]])
  }

  @Test func theDescriptorCarriesNamesAndSchemasDerivedFromTheTypes() {
    let descriptor = Counter().descriptor()
    #expect(descriptor.name == "counter")
    #expect(descriptor.publicActions == ["increment", "decrement", "set", "noop"])
    #expect(
      descriptor.viewSchema == [
        "type": "object",
        "properties": ["count": ["type": "integer"], "isEven": ["type": "boolean"]],
        "required": ["count", "isEven"],
      ])
    #expect(
      descriptor.actionSchemas["set"] == [
        "type": "object",
        "properties": ["type": ["const": "set"], "value": ["type": "integer"]],
        "required": ["type", "value"], "additionalProperties": false,
      ])
    #expect(descriptor.actionSchemas["reset"] == nil)
    #expect(descriptor.eventSchemas["milestone"]?["properties"]?["count"] == ["type": "integer"])
    let loader = Loader(backend: ListBackend(clock: TestClock(), script: []), clock: TestClock())
    let schema = loader.descriptor().viewSchema
    #expect(schema["properties"]?["items"] == ["type": "array", "items": ["type": "string"]])
    #expect(schema["properties"]?["load"] == ["type": "object"])
  }
}

/// A feature whose state forgets an in-flight save when it is decoded, as a persistent
/// feature does after a restart.
private struct Saver: Feature {
  struct State: Codable, Equatable, Sendable {
    var status = "idle"
    var text = ""

    init() {}

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      text = try container.decode(String.self, forKey: .text)
      status = "idle"
    }
  }
  enum Action: Codable, Equatable, Sendable { case save }

  static let name = "saver"

  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    state.status = "saving"
    return .none
  }
}

/// `Saver`, but saying what its decoding changed: only a save it settled. It also fills in a
/// `note` a snapshot left out, which it does not report (a change only the whole comparison
/// would see), so a test can tell which of the two decided.
private struct Reporter: Feature {
  struct State: Codable, Equatable, Sendable {
    var status = "idle"
    var text = ""
    var note = ""

    init() {}

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      text = try container.decode(String.self, forKey: .text)
      note = try container.decodeIfPresent(String.self, forKey: .note) ?? ""
      status = "idle"
    }
  }
  enum Action: Codable, Equatable, Sendable { case save }

  static let name = "reporter"

  var initialState: State { State() }

  static func decodingChanged(_ state: State, from saved: JSON) -> Bool? {
    saved["status"] == "saving"
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    state.status = "saving"
    return .none
  }
}

/// A feature with a list, saying what its decoding changed from the saved state's `status`
/// alone, and only when its `items` arrived emptied (a large array decoded consuming); like
/// `Reporter`, it fills in a `note` a snapshot left out, which only the whole comparison sees.
private struct Lister: Feature {
  struct State: Codable, Equatable, Sendable {
    var status = "idle"
    var items: [String] = []
    var note = ""

    init() {}

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      items = try container.decode([String].self, forKey: .items)
      note = try container.decodeIfPresent(String.self, forKey: .note) ?? ""
      status = "idle"
    }
  }
  enum Action: Codable, Equatable, Sendable { case save }

  static let name = "lister"

  var initialState: State { State() }

  static func decodingChanged(_ state: State, from saved: JSON) -> Bool? {
    // The large array is not in `saved` any more: only the rest can be compared.
    guard saved["items"] == [] else { return nil }
    return saved["status"] == "saving"
  }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    state.status = "saving"
    return .none
  }
}

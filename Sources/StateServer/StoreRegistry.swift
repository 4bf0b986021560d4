import JSON
import StateKit

/// The features the server was built with and the stores open now, in opening order.
///
/// Every feature has a default store named after it, open from the start; `store/open` adds
/// more. Persistent stores are reported to the persistence at each point of their life.
///
/// A persistent default store with saved data is opened lazily: at start it only takes its
/// place (`deferred`), and its saved state is read by the first request that needs the store
/// (`store(_:)`), which waits for it; a request that needs no store is answered at once, however
/// large the saved state (docs/architecture.md, "Restart reads a store when it is needed").
@StateActor
final class StoreRegistry {
  let features: [FeatureDescriptor]
  private let featuresByName: [String: FeatureDescriptor]
  private(set) var stores: [String: any AnyStore] = [:]
  /// Open store ids in opening order; a closed store leaves a hole (nil) until more than half
  /// are holes, so closing is O(1) amortized (closing 20,000 stores was quadratic).
  private var order: [String?] = []
  /// Index in `order` of each open store.
  private var positions: [String: Int] = [:]
  private var holes = 0
  private var persistent: Set<String> = []
  let persistence: (any StorePersistence)?
  private var generated = 0
  /// Persistent default stores not read yet, by id, each with its place in `order` already.
  private var deferred: [String: FeatureDescriptor] = [:]
  /// Told of each deferred store once it is opened (the server attaches it to its clients).
  var onOpen: ((any AnyStore) -> Void)?
  /// Told of a deferred store that could not be opened, and why (the server logs it).
  var onFailure: ((String, RPCError) -> Void)?

  init(features: [FeatureDescriptor], persistence: (any StorePersistence)?) {
    self.features = features
    self.featuresByName = Dictionary(features.map { ($0.name, $0) }) { first, _ in first }
    self.persistence = persistence
  }

  func feature(named name: String) -> FeatureDescriptor? { featuresByName[name] }

  /// The store found last: a client sends most requests to the store it sent the last one to,
  /// and comparing its id costs less than hashing it. Forgotten when that store closes.
  private var lastFound: (id: String, store: any AnyStore)?

  /// The open store `id`; a deferred one is opened now (its saved state read).
  func store(_ id: String) -> (any AnyStore)? {
    if let lastFound, lastFound.id == id { return lastFound.store }
    guard let found = stores[id] ?? openDeferred(id) else { return nil }
    lastFound = (id, found)
    return found
  }

  /// The stores open now, in opening order; deferred ones are not read for this.
  var openStores: [any AnyStore] { order.compactMap { $0.flatMap { stores[$0] } } }

  /// `store/list`'s and `initialize`'s entries, in order: a deferred store's version is its
  /// saved one, read without its state.
  var summaries: [JSON] {
    order.compactMap { id -> JSON? in
      guard let id else { return nil }
      if let store = stores[id] { return Connection.summary(store) }
      guard let feature = deferred[id] else { return nil }
      return [
        "store": .string(id), "feature": .string(feature.name),
        "version": .integer(Int64(persistence?.savedVersion(of: id) ?? 0)),
      ]
    }
  }

  func isPersistent(_ id: String) -> Bool { persistent.contains(id) || deferred[id] != nil }

  /// Opens the default store of every feature. A persistent one with saved data only takes its
  /// place, to be read when first needed; the others open now, and so does every store another
  /// feature reads (a `Shared` read must not open a store in the middle of another store's
  /// reduce). Every feature's `Shared` handles are bound first, so a store reducing as it opens
  /// (a restored list checking its age) already reads the stores opened before it.
  func openDefaultStores() throws(RPCError) {
    for feature in features {
      for dependency in feature.dependencies {
        // Checked before any store opens: such a read could run while that store reduces.
        guard dependency.featureName != feature.name else {
          throw refusal(feature, dependency, "a feature cannot read a store of its own feature")
        }
        dependency.bind { [weak self] in self?.stores[$0] }
      }
    }
    let read = Set(features.flatMap { $0.dependencies.map(\.storeID) })
    for feature in features where stores[feature.name] == nil && deferred[feature.name] == nil {
      if feature.isPersistent, !read.contains(feature.name), let persistence,
        persistence.savedVersion(of: feature.name) != nil
      {
        deferred[feature.name] = feature
        positions[feature.name] = order.count
        order.append(feature.name)
        continue
      }
      _ = try open(
        feature: feature, id: feature.name, initial: nil, persist: feature.isPersistent,
        refusingOtherFeatures: false)
    }
    try checkDependencies()
  }

  /// Refuses a `Shared` handle whose store is not open once the default stores are, or holds
  /// another feature. A handle looks its store up at every read, so a store closed and opened
  /// again later is read anew (a reducer reading its own feature's store, refused above, could
  /// read the very store it is reducing, whose state is in use).
  private func checkDependencies() throws(RPCError) {
    for feature in features {
      for dependency in feature.dependencies {
        let found = stores[dependency.storeID]?.featureName
        guard found == dependency.featureName else {
          throw refusal(
            feature, dependency,
            found.map { "that store holds feature '\($0)'" } ?? "no such store is open")
        }
      }
    }
  }

  private func refusal(
    _ feature: FeatureDescriptor, _ dependency: SharedDependency, _ problem: String
  ) -> RPCError {
    .internalError(
      "feature '\(feature.name)' reads store '\(dependency.storeID)' of feature "
        + "'\(dependency.featureName)': \(problem)")
  }

  /// Opens deferred store `id` (reads its saved state), in the place it took at start.
  private func openDeferred(_ id: String) -> (any AnyStore)? {
    guard let feature = deferred.removeValue(forKey: id) else { return nil }
    do {
      let store = try open(
        feature: feature, id: id, initial: nil, persist: true, refusingOtherFeatures: false)
      onOpen?(store)
      return store
    } catch {
      // Its place is given up: the store is unknown from now on, and the log says why.
      if let position = positions.removeValue(forKey: id) {
        order[position] = nil
        holes += 1
      }
      onFailure?(id, error)
      return nil
    }
  }

  /// Opens a store. `id` nil generates one (`counter-1`); `initial` is a merge patch over the
  /// feature's initial state. A persistent store whose id holds another feature's saved data
  /// is refused, the data untouched, unless `refusingOtherFeatures` is false (the default
  /// stores at start-up, which must open: that data is set aside with a warning instead).
  /// `restoring` (a fork's private state and version) is used instead of saved data.
  func open(
    feature: FeatureDescriptor, id: String?, initial: consuming JSON?, persist: Bool,
    refusingOtherFeatures: Bool = true, restoring: (state: JSON, version: UInt64)? = nil
  ) throws(RPCError) -> any AnyStore {
    let id = id ?? nextID(for: feature.name)
    guard stores[id] == nil, deferred[id] == nil else { throw .storeExists(id) }
    if persist, refusingOtherFeatures, let saved = persistence?.savedFeature(of: id),
      saved != feature.name
    {
      throw .invalidParams(
        pointer: "/feature",
        reason:
          "store '\(id)' holds saved data of feature '\(saved)'; open it as '\(saved)', "
          + "or persist '\(feature.name)' under another store id")
    }
    var restored = restoring
    var text: DeferredArrays?
    if persist, initial == nil, restoring == nil, let persistence {
      if let database = persistence as? Persistence {
        restored = database.restore(
          storeID: id, feature: feature.name, schemaVersion: feature.schemaVersion,
          leavingText: true)
        text = database.takeRestoredText(of: id)
      } else {
        restored = persistence.restore(
          storeID: id, feature: feature.name, schemaVersion: feature.schemaVersion)
      }
    }
    if let text, let made = Self.store(of: feature, id, restored, readingArraysFrom: text) {
      return opened(made, id: id, persist: persist)
    } else if text != nil, let database = persistence as? Persistence {
      // Saved data that did not restore with its arrays left as text is read again whole:
      // what is wrong with it is then said (and it set aside) as it always was.
      restored = database.restoreAgainWhole(
        storeID: id, feature: feature.name, schemaVersion: feature.schemaVersion)
    }
    let store: any AnyStore
    let isRestoring = restored != nil
    do {
      // Moved in, so that no copy here outlives the decode; a saved state stays alive in
      // `Persistence` until `attach`, whose journal starts from it.
      store = try feature.makeStore(id, consume initial, consume restored)
    } catch {
      if isRestoring, let persistence {
        // A snapshot that no longer decodes is set aside and reported, never fatal.
        persistence.setAside(storeID: id, reason: "\(error)")
        do {
          store = try feature.makeStore(id, nil, nil)
        } catch {
          throw .internalError("feature '\(feature.name)' cannot make its initial state: \(error)")
        }
      } else {
        switch error {
        case .invalid(let pointer, let reason):
          throw .invalidParams(pointer: "/state" + pointer, reason: reason)
        case .refused(_, let reason):
          throw .invalidParams(pointer: "/state", reason: reason)
        }
      }
    }
    return opened(store, id: id, persist: persist)
  }

  /// The store made from `restored` while its large arrays are read from `text` (by its
  /// decode, `DeferredArrays.current`); nil when that fails.
  private static func store(
    of feature: FeatureDescriptor, _ id: String, _ restored: (state: JSON, version: UInt64)?,
    readingArraysFrom text: DeferredArrays
  ) -> (any AnyStore)? {
    DeferredArrays.$current.withValue(text) { try? feature.makeStore(id, nil, restored) }
  }

  /// Registers `store`, just made, under `id`.
  private func opened(_ store: any AnyStore, id: String, persist: Bool) -> any AnyStore {
    stores[id] = store
    // A deferred store opens in the place it took at start.
    if positions[id] == nil {
      positions[id] = order.count
      order.append(id)
    }
    if persist, let persistence {
      persistent.insert(id)
      persistence.attach(store)
    }
    return store
  }

  /// Closes a store: its effects are cancelled and a persistent store's last changes
  /// committed. Throws (after closing) when they could not be.
  func close(_ id: String) throws(CommitFailure) {
    if deferred.removeValue(forKey: id) != nil, let position = positions.removeValue(forKey: id) {
      // Never read, so nothing to save: its saved state stays as it is.
      order[position] = nil
      holes += 1
      return
    }
    guard let store = stores.removeValue(forKey: id) else { return }
    if lastFound?.id == id { lastFound = nil }
    if let position = positions.removeValue(forKey: id) {
      order[position] = nil
      holes += 1
      if holes > order.count / 2 { compactOrder() }
    }
    store.close()
    store.observer = nil
    store.holdingObserver = nil
    if persistent.remove(id) != nil { try persistence?.detach(storeID: id) }
  }

  /// Closes every store; returns the failures to commit their last changes.
  @discardableResult
  func closeAll() -> [CommitFailure] {
    var failures: [CommitFailure] = []
    for case let id? in order.reversed() {
      do { try close(id) } catch { failures.append(error) }
    }
    return failures
  }

  private func compactOrder() {
    order.removeAll { $0 == nil }
    holes = 0
    for (index, id) in order.enumerated() {
      if let id { positions[id] = index }
    }
  }

  private func nextID(for feature: String) -> String {
    while true {
      generated += 1
      let id = "\(feature)-\(generated)"
      if stores[id] == nil && deferred[id] == nil { return id }
    }
  }
}

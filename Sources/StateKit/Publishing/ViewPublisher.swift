import JSON

/// Keeps a store's published view as JSON and turns each new view into the RFC 6902 patch
/// from the previous one, at a cost that grows with the change, not with the view.
///
/// How (measured by `bench/statekit`):
/// - **Unchanged views cost nothing.** For a view without `IdentifiedArray`s the last view is
///   kept and compared with `==` first. (A view holding `IdentifiedArray`s is not kept: a
///   second reference to their storage would force the reducer's next edit to copy the
///   whole array; their own revision check below is O(1) instead.)
/// - **No full encode, no full diff.** `PatchWalk` walks the new view's `Encodable`
///   structure against the published JSON: struct fields are compared leaf by leaf where
///   they lie, an `IdentifiedArray` whose change log reaches back to the revision published
///   last time re-encodes only the elements logged as touched, and each difference becomes
///   an operation directly. What the walk cannot follow (plain arrays, custom encodings) is
///   encoded whole and diffed with `JSONPatch.diff`, locally, at its own path.
/// - **Applied in place.** The operations are applied to the kept JSON, which the publisher
///   owns uniquely, so editing element 50,000 edits it where it lies.
/// - **No second copy of a large array.** An `IdentifiedArray` of `ArrayElision.threshold`
///   elements or more is kept as an empty array: the state holds its elements, its change log
///   what an update is diffed against, and the operations inside it go to the clients without
///   being applied here. Whoever reads the whole view gets it encoded on demand
///   (`materialized(_:)`, `value(at:in:)`).
struct ViewPublisher<View: Encodable & Equatable> {
  private(set) var json: JSON
  private var lastView: View?
  /// Why the last update published nothing although the view changed, for the store to report.
  var problem: String?
  /// The revision of each `IdentifiedArray` as last published, by its path in the view.
  private(set) var marks: [JSONPointer: ArrayMark] = [:]
  /// The walker of every update, restarted each time (see `PatchWalk.restart`); it keeps the
  /// last patch's operations buffer, emptied, for the next walk to fill (rather than an
  /// allocation and a free per published action), and the member a leaf last changed
  /// (`PatchWalk.path(under:_:)`). A copy of the publisher shares it, which is harmless: a walk
  /// runs start to finish within one `update`, on the store's actor, and what the walker keeps
  /// between walks is only buffers and caches: its levels too (`PatchWalk.reusesLevels`), which
  /// hold nothing of the published JSON between walks.
  ///
  /// Owned through `keptWalker`, which only publishers (and their copies) hold: the levels
  /// hold the walker, and the owner lets them go when the last publisher goes.
  private let keptWalker: PatchWalk.Kept
  /// `keptWalker.walk`, held here too: reading it through the owner cost a retain and a
  /// release per use.
  private let walker: PatchWalk
  /// The path an operation last had, and its text as a JSON string for the wire form: made
  /// once while the same member keeps changing, not once per publication. Starts as the
  /// root's, whose text is empty. Not an optional tuple:
  /// reading one copied both parts (a retain each) before comparing.
  private var recentPath = JSONPointer(tokens: [])
  private var recentPathText = JSON.string("")
  /// `JSONPointer.root`, held: reading the static cost a `swift_once` and a retain per walk.
  private let root = JSONPointer.root
  /// Whether each update records how to take it back (a store keeping history: its entries
  /// walk the view back through these, `HistoryLog.view(at:)`).
  var recordsReversal = false {
    didSet { reversal = JSONPatchReversal() }
  }
  /// What takes the updates since the last `takeReversal()` back.
  private var reversal = JSONPatchReversal()
  /// The last update's operations whose value is left to the state (`takeHeld()`).
  private var held: [PatchWalk.HeldPlace] = []

  init(
    _ view: View, replacesUpdatedElements: Bool = false,
    elisionThreshold: Int = ArrayElision.threshold
  ) {
    // `replacesUpdatedElements`: see `PatchWalk` (a store's journal of its private state).
    keptWalker = PatchWalk.Kept(replacesUpdatedElements: replacesUpdatedElements)
    walker = keptWalker.walk
    walker.elisionThreshold = elisionThreshold
    json = .null
    if !firstPublication(of: view, leavingOutFrom: elisionThreshold) {
      // An array left out where the walk does not reach (a custom encoding): nothing would
      // publish its changes, so this first view keeps every element.
      _ = firstPublication(of: view, leavingOutFrom: Int.max)
    }
  }

  /// Encodes the first view, leaving out the elements of arrays of `threshold` elements or
  /// more (`ArrayElision`: they are never encoded here), and marks its arrays; false when an
  /// array was left out that the walk does not reach.
  private mutating func firstPublication(of view: View, leavingOutFrom threshold: Int) -> Bool {
    let elision = ArrayElision(threshold: threshold)
    do {
      json =
        try ArrayElision.key.map { try JSONValueEncoder().encode(view, userInfo: [$0: elision]) }
        ?? JSONValueEncoder().encode(view)
    } catch {
      report("a view of type \(View.self) does not encode: \(error)")
    }
    // Learn where the arrays are (and mark them) with one walk over the first encoding. A view
    // that holds no array element has nothing worth marking: the first update publishes any
    // `IdentifiedArray` in it whole, which for an empty one costs a comparison. Skipping the
    // walk here takes about half of the six default stores' publishers' work off the
    // start-up; the first update walks instead of comparing views.
    guard !elision.leftOut.isEmpty || Self.holdsArrayElements(json) else { return true }
    let walk = PatchWalk(marks: [:])
    walk.oldIsCurrentEncoding = true
    walk.leftOutByEncoding = elision.leftOut
    do {
      try walk.visit(view, at: .root, old: json)
      marks = walk.marks
      lastView = walk.sawIdentifiedArray ? nil : view
    } catch {
      lastView = view
    }
    return walk.leftOutFound == elision.leftOut.count
  }

  /// A publisher of `view` whose encoding is `json` already (equal by value): a restored
  /// state's saved JSON, which its decoding did not change, is kept instead of encoded again.
  /// Not when it holds an array the publisher leaves to the state: the first view is then
  /// encoded without that array's elements, which costs less than keeping them.
  static func restored(
    _ view: View, encoded json: consuming JSON, replacesUpdatedElements: Bool = false
  ) -> ViewPublisher {
    if json.holdsElidedArray {
      return ViewPublisher(view, replacesUpdatedElements: replacesUpdatedElements)
    }
    return ViewPublisher(view, keeping: json, replacesUpdatedElements: replacesUpdatedElements)
  }

  private init(_ view: View, keeping json: consuming JSON, replacesUpdatedElements: Bool) {
    keptWalker = PatchWalk.Kept(replacesUpdatedElements: replacesUpdatedElements)
    walker = keptWalker.walk
    walker.elisionThreshold = ArrayElision.threshold
    self.json = json
    guard Self.holdsArrayElements(self.json) else { return }
    let walk = PatchWalk(marks: [:])
    walk.oldIsCurrentEncoding = true
    do {
      try walk.visit(view, at: .root, old: self.json)
      marks = walk.marks
      lastView = walk.sawIdentifiedArray ? nil : view
    } catch {
      lastView = view
    }
  }

  /// Whether some array in `json`, at any depth, has at least `count` elements.
  /// Makes `view` the published one; returns the operations from the previous one (empty
  /// when the view did not change).
  mutating func update(to view: View) -> [JSON] {
    if let lastView, lastView == view { return [] }
    lastView = nil
    if !held.isEmpty { held = [] }
    var patch: JSONPatch
    do {
      patch = try walk(to: view)
    } catch {
      // The store reports it with what it knows of the cause (TestStore: the test's line).
      problem = "a view of type \(View.self) does not encode: \(error)"
      return []
    }
    let elision = walker.takeElision()
    guard !patch.isEmpty else {
      walker.recycle(&patch.operations)
      // An array let go of without a change the clients see.
      if let elision { try? applyKept([], elision) }
      return []
    }
    do {
      if let elision {
        try applyKept(patch.operations, elision)
      } else if recordsReversal {
        try patch.apply(to: &json, recording: &reversal)
      } else {
        try patch.apply(to: &json)
      }
    } catch {
      // A walk that disagrees with the published JSON is a bug; recover by publishing the
      // whole view, so clients stay correct.
      report("internal: a view patch did not apply (\(error)); publishing the whole view")
      return replaceAll(with: view)
    }
    guard let places = elision?.held, !places.isEmpty else {
      return wireForms(of: &patch.operations)
    }
    var wire = wireForms(of: &patch.operations)
    for place in places { wire[place.operation] = HeldValue.holding(wire[place.operation]) }
    held = places
    return wire
  }

  /// The operations of the last update whose value it left to the state (`HeldValue`), moved
  /// out: the update's patch has each without its value.
  mutating func takeHeld() -> [PatchWalk.HeldPlace] {
    var taken: [PatchWalk.HeldPlace] = []
    swap(&taken, &held)
    return taken
  }

  /// Whether the last update left a value to the state (`takeHeld()`).
  var holdsValues: Bool { !held.isEmpty }

  /// Applies the operations the kept JSON can take (not those inside a left-out array), and its
  /// own edits; records the reversal of the client-only operations from what the walk gave.
  private mutating func applyKept(
    _ operations: [JSONPatch.Operation], _ elision: PatchWalk.Elision
  ) throws(JSONPatchError) {
    var kept: [JSONPatch.Operation] = []
    var position = 0
    for range in elision.clientOnly {
      kept += operations[position..<range.lowerBound]
      position = range.upperBound
    }
    kept += operations[position...]
    kept += elision.keptEdits
    if !kept.isEmpty {
      if recordsReversal {
        try JSONPatch(kept).apply(to: &json, recording: &reversal)
      } else {
        try JSONPatch(kept).apply(to: &json)
      }
    }
    if recordsReversal { reversal.append(elision.reversal) }
  }

  /// The size from which an `IdentifiedArray`'s elements are left to the state.
  var elisionThreshold: Int { walker.elisionThreshold }

  /// The published view in full: the kept JSON with the elements of every left-out array
  /// encoded from `view`, which must be the view last published. O(view) when arrays are left
  /// out; the kept JSON itself otherwise.
  func materialized(_ view: View) -> JSON {
    var full = json
    for (path, mark) in marks where mark.elidedCount != nil {
      do {
        guard let array = try ArrayLocator.encode(.whole, ofArrayAt: path, in: view) else {
          continue
        }
        try JSONPatch([.replace(path: path, value: array)]).apply(to: &full)
      } catch {
        report("internal: the array at \(path) of a \(View.self) view was not found: \(error)")
      }
    }
    return full
  }

  /// The elements the kept JSON leaves to the state, in arrays at or under `path`.
  func leftOutElements(under path: JSONPointer = .root) -> Int {
    marks.reduce(0) { $0 + (path.isPrefix(of: $1.key) ? $1.value.elidedCount ?? 0 : 0) }
  }

  /// The published value at `path` (nil: none), `view` being the view last published: inside
  /// a left-out array, only the element on the path is encoded.
  func value(at path: JSONPointer, in view: View) -> JSON? {
    for (arrayPath, mark) in marks {
      guard let count = mark.elidedCount else { continue }
      if arrayPath.isPrefix(of: path) {
        let depth = arrayPath.tokens.count
        guard depth < path.tokens.count else {
          return try? ArrayLocator.encode(.whole, ofArrayAt: arrayPath, in: view)
        }
        guard let index = JSONPointer.arrayIndex(path.tokens[depth]), index < count,
          let element = try? ArrayLocator.encode(.element(index), ofArrayAt: arrayPath, in: view)
        else { return nil }
        return JSONPointer(tokens: Array(path.tokens[(depth + 1)...])).value(in: element)
      }
      if path.isProperPrefix(of: arrayPath) { return path.value(in: materialized(view)) }
    }
    return path.value(in: json)
  }

  /// Whether the published value at `path` is an object: the kept JSON says so for every value
  /// but those inside a left-out array, where only the element on the path is encoded.
  func isObject(at path: JSONPointer, in view: View) -> Bool {
    let insideLeftOut = marks.contains {
      $0.value.elidedCount != nil && $0.key.isProperPrefix(of: path)
    }
    guard case .object? = insideLeftOut ? value(at: path, in: view) : path.value(in: json) else {
      return false
    }
    return true
  }

  /// Whether the published view has a value at `path`: without encoding a left-out array, or
  /// more than the element on the path.
  func hasValue(at path: JSONPointer, in view: View) -> Bool {
    for (arrayPath, mark) in marks {
      guard let count = mark.elidedCount, arrayPath.isPrefix(of: path) else { continue }
      let depth = arrayPath.tokens.count
      guard depth < path.tokens.count else { return true }
      guard let index = JSONPointer.arrayIndex(path.tokens[depth]), index < count else {
        return false
      }
      return depth + 1 == path.tokens.count || value(at: path, in: view) != nil
    }
    // The kept JSON has every value outside the left-out arrays (an empty array in their place).
    return path.value(in: json) != nil
  }

  /// What takes the updates since the last call back, moved out.
  mutating func takeReversal() -> JSONPatchReversal {
    var taken = JSONPatchReversal()
    if !reversal.isEmpty { swap(&taken, &reversal) }
    return taken
  }

  /// The wire forms of `operations`, which are consumed (each one's value and path moved into
  /// its wire form, not copied), and their emptied buffer kept for the next walk. Reversed
  /// first, so that `removeLast()` moves each out of the buffer in order.
  ///
  /// The result's buffer comes from `reserveCapacity`, which the compiler specializes for
  /// `JSON`: `Array(repeating:count:)` allocates through the standard library's unspecialized
  /// `_allocateBufferUninitialized`, whose `getContiguousArrayStorageType` looked up the
  /// generic `_ContiguousArrayStorage<JSON>` metadata on every publication.
  private mutating func wireForms(of operations: inout [JSONPatch.Operation]) -> [JSON] {
    var wire: [JSON] = []
    wire.reserveCapacity(operations.count)
    operations.reverse()
    while !operations.isEmpty {
      wire.append(wireForm(operations.removeLast()))
    }
    walker.recycle(&operations)
    return wire
  }

  /// `operation.json`, with the text of the path last published reused.
  private mutating func wireForm(_ operation: consuming JSONPatch.Operation) -> JSON {
    if !operation.hasPath(recentPath) {
      let path = operation.path
      recentPathText = .string(path.description)
      recentPath = path
    }
    return operation.json(pathText: recentPathText)
  }

  /// Walks in a function of its own so that its references into the published JSON are
  /// released before the patch is applied to it (or applying would copy what it edits).
  private mutating func walk(to view: View) throws -> JSONPatch {
    // The marks are handed over and taken back only when there are any (a view without
    // `IdentifiedArray`s has none): copying and replacing the empty dictionary cost a retain
    // and two releases per walk.
    if !marks.isEmpty { walker.restart(marks: marks) } else { walker.restart() }
    walker.recordsReversal = recordsReversal
    do {
      try walker.visit(view, at: root, old: json)
    } catch {
      _ = walker.finish()
      walker.dropMarks()
      throw error
    }
    let operations = walker.finish()
    if walker.hasMarks || !marks.isEmpty { marks = walker.takeMarks() }
    if !walker.sawIdentifiedArray { lastView = view }
    return JSONPatch(operations)
  }

  /// Whether some array in `json`, at any depth, has an element.
  private static func holdsArrayElements(_ json: JSON) -> Bool {
    switch json {
    case .array(let elements): return !elements.isEmpty
    case .object(let object):
      return (0..<object.count).contains { holdsArrayElements(object.value(at: $0)) }
    default: return false
    }
  }

  private mutating func replaceAll(with view: View) -> [JSON] {
    let leftOut = marks.values.contains { $0.elidedCount != nil }
    marks = [:]
    do {
      let new = try JSONValueEncoder().encode(view)
      // The kept JSON lacks the clients' elements of a left-out array: no diff against it.
      let patch =
        leftOut
        ? JSONPatch([.replace(path: .root, value: new)]) : JSONPatch.diff(from: json, to: new)
      if recordsReversal {
        // Recorded as one replacement of the whole view, which cannot fail to apply.
        try? JSONPatch([.replace(path: .root, value: new)]).apply(to: &json, recording: &reversal)
        if leftOut { reversal.markIncomplete() }
      }
      json = new
      return patch.json.arrayValue ?? []
    } catch {
      return []
    }
  }
}

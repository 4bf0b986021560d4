import FoundationEssentials
import JSON

/// One walk of a new view against the published JSON, collecting the patch operations.
/// See `ViewPublisher` for the design; the `Encoder` it walks with is each object's `WalkLevel`
/// (WalkEncoder.swift).
final class PatchWalk {
  private(set) var operations: [JSONPatch.Operation] = []
  private(set) var marks: [JSONPointer: ArrayMark]
  var sawIdentifiedArray = false
  /// Elements from which an array published whole is left to the state (`ArrayElision`).
  var elisionThreshold = Int.max
  /// Whether the publisher records reversals: a left-out array then records its own.
  var recordsReversal = false
  /// The arrays a first encoding left out, by path (`oldIsCurrentEncoding`), and how many of
  /// them the first walk found.
  var leftOutByEncoding: [JSONPointer: Int] = [:]
  private(set) var leftOutFound = 0
  /// What concerns the arrays whose elements the publisher does not keep, if any (nil: the
  /// patch applies to the kept JSON as it is).
  private(set) var elision: Elision?

  /// The part of a walk's result that a publisher keeping no elements of some arrays handles
  /// apart: operations its JSON cannot take, what it takes instead, how to take those back.
  struct Elision {
    /// Operations (by position) for the clients only: inside a left-out array.
    var clientOnly: [Range<Int>] = []
    /// Edits of the kept JSON that no client sees (an array's elements let go).
    var keptEdits: [JSONPatch.Operation] = []
    /// What takes the client-only operations back.
    var reversal = JSONPatchReversal()
    /// Client-only operations whose value the walk did not encode (`hold(_:at:)`).
    var held: [HeldPlace] = []
  }

  /// Where a left-out array replaced whole lies in the walk's operations: its value is left to
  /// the state (`HeldValue`).
  struct HeldPlace {
    var operation: Int
    var path: JSONPointer
  }
  let encoder = JSONValueEncoder()
  /// An updated `IdentifiedArray` element is replaced whole instead of diffed field by field:
  /// what a journal wants (about as many bytes, half the work); a client's view patch diffs.
  let replacesUpdatedElements: Bool
  /// Set for a publisher's first walk, whose `old` is the encoding of the very view walked: an
  /// `IdentifiedArray` found there is marked as it stands, not encoded a second time and
  /// compared element by element with what it encoded to a moment before.
  var oldIsCurrentEncoding = false

  /// The path of the member a leaf last changed (`recentPath`), with its parent's path and
  /// its name: a view changes the same member publication after publication (a count), and
  /// building its path again cost an allocation (the tokens array) each time. Kept from walk to
  /// walk by the walker itself, which the publisher keeps. Three plain fields and a flag rather
  /// than an optional struct: reading an optional struct out of this class copied all three
  /// (three retains and two releases more per publication).
  private var hasRecentLeaf = false
  private var recentParent = JSONPointer(tokens: [])
  private var recentName = ""
  private var recentPath = JSONPointer(tokens: [])

  /// Whether `visit` reuses its `WalkLevel`s from walk to walk, one per depth in `levels`
  /// (`depth` of them in use), instead of making one per walked object (an allocation and a
  /// free) along with its keyed container (generic metadata lookups, WalkLevel.swift). Only a
  /// walker whose owner lets the levels go does (`Kept`): a level holds its walker.
  private let reusesLevels: Bool
  private var levels: [WalkLevel] = []
  private var depth = 0

  /// `operations` is an empty buffer to fill.
  init(
    marks: [JSONPointer: ArrayMark], replacesUpdatedElements: Bool = false,
    operations: [JSONPatch.Operation] = [], reusesLevels: Bool = false
  ) {
    self.marks = marks
    self.replacesUpdatedElements = replacesUpdatedElements
    self.operations = operations
    self.reusesLevels = reusesLevels
  }

  /// A walker that reuses its levels (a publisher's), held by its one owner: the levels and
  /// their kept containers hold the walker (their `Encoder`'s walk), and when the owner goes,
  /// it lets them go, which breaks those cycles.
  final class Kept {
    let walk: PatchWalk

    init(replacesUpdatedElements: Bool) {
      walk = PatchWalk(
        marks: [:], replacesUpdatedElements: replacesUpdatedElements, reusesLevels: true)
    }

    deinit { walk.releaseLevels() }
  }

  /// Lets the kept levels go, and their kept containers (`Kept`'s end).
  private func releaseLevels() {
    for level in levels { level.forgetContainers() }
    levels = []
  }

  /// The level of an object walked at `path` against `old`: the one kept for this depth when
  /// the walker reuses levels (given back by `done(with:)`), else a new one.
  private func level(at path: JSONPointer, old: consuming JSONObject) -> WalkLevel {
    guard reusesLevels else { return WalkLevel(walk: self, path: path, old: consume old) }
    defer { depth += 1 }
    if depth < levels.count {
      let level = levels[depth]
      level.reuse(path: path, old: consume old)
      return level
    }
    let level = WalkLevel(walk: self, path: path, old: consume old, keepsContainers: true)
    levels.append(level)
    return level
  }

  /// Ends the use of a level `level(at:old:)` gave, walked or not.
  private func done(with level: WalkLevel) {
    guard reusesLevels else { return }
    depth -= 1
    level.vacate()
  }

  /// Starts another walk with this walker (which a publisher keeps: making one per walk cost
  /// an allocation and a free per publication): the same state as a new one's, but for the
  /// recent leaf and the operations buffer it kept (`recycle(_:)`), whose allocation the next
  /// walk saves. Its marks are empty (`takeMarks()`, `dropMarks()`) unless given here.
  func restart(marks: [JSONPointer: ArrayMark]) {
    self.marks = marks
    sawIdentifiedArray = false
    if elision != nil { elision = nil }
  }

  /// `restart(marks:)` with no marks.
  func restart() {
    if !marks.isEmpty { marks = [:] }
    sawIdentifiedArray = false
    if elision != nil { elision = nil }
  }

  /// What the walk found about left-out arrays, moved out.
  func takeElision() -> Elision? {
    defer { elision = nil }
    return elision
  }

  /// The operations the walk found, moved out, so that the walker holds no second reference
  /// to them (the caller edits and recycles them in place).
  func finish() -> [JSONPatch.Operation] {
    var found: [JSONPatch.Operation] = []
    swap(&found, &operations)
    return found
  }

  /// Whether the walk holds marks (arrays it published or kept).
  var hasMarks: Bool { !marks.isEmpty }

  /// The marks, moved out (the walker is left with none).
  func takeMarks() -> [JSONPointer: ArrayMark] {
    var taken: [JSONPointer: ArrayMark] = [:]
    swap(&taken, &marks)
    return taken
  }

  /// Forgets the marks of a walk that failed.
  func dropMarks() {
    if !marks.isEmpty { marks = [:] }
  }

  /// Keeps `operations`' buffer, emptied, as the next walk's (unless it grew large).
  func recycle(_ operations: inout [JSONPatch.Operation]) {
    guard operations.capacity <= 16 else { return }
    // One by one from the end: `removeAll(keepingCapacity:)` destroys through the runtime's
    // generic `swift_arrayDestroy` (value witnesses) where these are concrete destroys.
    while !operations.isEmpty { operations.removeLast() }
    swap(&operations, &self.operations)
  }

  /// `parent.appending(name)`, the same pointer (tokens shared) as last time when it is the
  /// same member. `parent` is `inout` though it is not changed, so that a level lends its
  /// path where it lies (reading it copied it, a retain and a release per changed leaf).
  func path(under parent: inout JSONPointer, _ name: String) -> JSONPointer {
    if hasRecentLeaf, recentName == name, recentParent == parent { return recentPath }
    let path = parent.appending(name)
    hasRecentLeaf = true
    recentParent = parent
    recentName = name
    recentPath = path
    return path
  }

  /// Publishes `value` at `path`, where `old` is the JSON published there now (`nil`:
  /// absent).
  /// `IdentifiedArray`s are found by their own `encode(to:)`, which recognises the walk's
  /// encoders (`publishIfWalked(by:)`), never by asking `T` (a conformance scan per type).
  func visit<T: Encodable>(_ value: T, at path: JSONPointer, old: JSON?) throws {
    if T.self == String.self || T.self == Bool.self || T.self == Int.self || T.self == JSON.self
      || T.self == Date.self || T.self == URL.self || T.self == Data.self
      || T.self == Double.self
    {
      leaf(try encoder.encode(value), at: path, old: old)
      return
    }
    guard case .object(let oldMembers)? = old else {
      // Nothing to walk against: an `IdentifiedArray` publishes itself to the probe, any
      // other value is encoded whole.
      if try CollectionProbe.publish(value, into: self, at: path, old: old) { return }
      replace(at: path, old: old, with: try encoder.encode(value))
      return
    }
    let start = operations.count
    let keptEdits = elision?.keptEdits.count ?? 0
    let level = level(at: path, old: consume oldMembers)
    defer { done(with: level) }
    try value.encode(to: level)
    if level.isPoisoned {
      // The value used a container the walk does not follow: drop what it emitted and
      // diff its full encoding instead.
      operations.removeSubrange(start...)
      forgetElision(from: start, keptEdits: keptEdits)
      replace(at: path, old: old, with: try encoder.encode(value))
      return
    }
    finish(level)
  }

  /// Publishes an `IdentifiedArray` that one of the walk's encoders met.
  func publish<Element: Encodable>(
    _ array: IdentifiedArray<Element>, at path: JSONPointer, old: JSON?
  ) throws {
    sawIdentifiedArray = true
    try array.publish(into: self, at: path, old: old)
  }

  /// Removes the members of the old object that the new value did not encode (a `nil`
  /// optional, another enum case), in nested containers too.
  private func finish(_ level: WalkLevel) {
    if !level.encodedEveryOldKey {
      for position in 0..<level.old.count where !level.wasEncoded(position) {
        let path = level.path.appending(level.old.key(at: position))
        invalidateMarks(under: path)
        operations.append(.remove(path: path))
      }
    }
    for child in level.children { finish(child) }
  }

  /// A scalar (or a value encoded whole): one operation when it differs. The path is built
  /// only then: most leaves are unchanged.
  func leaf(_ new: JSON, at path: @autoclosure () -> JSONPointer, old: JSON?) {
    guard let old else {
      operations.append(.add(path: path(), value: new))
      return
    }
    if old == new { return }
    let path = path()
    if case .array = old { invalidateMarks(under: path) }
    if case .object = old { invalidateMarks(under: path) }
    operations.append(.replace(path: path, value: new))
  }

  /// Replaces what is at `path` by `new`: a local diff when both are containers.
  func replace(at path: JSONPointer, old: JSON?, with new: JSON) {
    let heldLeftOut = invalidateMarks(under: path)
    guard let old else {
      operations.append(.add(path: path, value: new))
      return
    }
    if heldLeftOut {
      // `old` lacks the elements of an array the clients hold: no diff against it.
      operations.append(.replace(path: path, value: new))
      return
    }
    if old == new { return }
    append(JSONPatch.diff(from: old, to: new), under: path)
  }

  /// Appends `patch`, whose paths are relative to `prefix`.
  func append(_ patch: JSONPatch, under prefix: JSONPointer) {
    if prefix.isRoot {
      operations += patch.operations
      return
    }
    func rebased(_ pointer: JSONPointer) -> JSONPointer {
      JSONPointer(tokens: prefix.tokens + pointer.tokens)
    }
    for operation in patch.operations {
      switch operation {
      case .add(let path, let value): operations.append(.add(path: rebased(path), value: value))
      case .remove(let path): operations.append(.remove(path: rebased(path)))
      case .replace(let path, let value):
        operations.append(.replace(path: rebased(path), value: value))
      case .move(let from, let path):
        operations.append(.move(from: rebased(from), path: rebased(path)))
      case .copy(let from, let path):
        operations.append(.copy(from: rebased(from), path: rebased(path)))
      case .test(let path, let value): operations.append(.test(path: rebased(path), value: value))
      }
    }
  }

  func append(_ operation: JSONPatch.Operation) { operations.append(operation) }

  var operationCount: Int { operations.count }

  func dropOperations(from start: Int) {
    operations.removeSubrange(start...)
    if elision?.held.isEmpty == false { elision?.held.removeAll { $0.operation >= start } }
  }

  /// Replaces the array at `path` whole, for the clients only, without encoding it: the
  /// operation's value is left to the state, which writes it as text when the patch is written
  /// (`HeldValue`), never as a tree of its elements next to them.
  func hold(at path: JSONPointer) {
    let start = operations.count
    operations.append(.replace(path: path, value: .null))
    clientOnly(from: start)
    elision?.held.append(HeldPlace(operation: start, path: path))
  }

  func mark(_ path: JSONPointer, _ mark: ArrayMark) { marks[path] = mark }

  func markedRevision(at path: JSONPointer) -> ArrayMark? { marks[path] }

  /// The count of the array a first encoding left out at `path` (nil: it kept it), noting
  /// that the walk found it.
  func leftOutAtStart(_ path: JSONPointer) -> Int? {
    guard let count = leftOutByEncoding[path] else { return nil }
    leftOutFound += 1
    return count
  }

  /// Forgets what concerns left-out arrays among operations from `start` and kept edits from
  /// `keptEdits` on (they were dropped; their arrays are replaced whole, marks forgotten).
  private func forgetElision(from start: Int, keptEdits: Int) {
    guard elision != nil else { return }
    elision?.clientOnly.removeAll { $0.lowerBound >= start }
    elision?.keptEdits.removeSubrange(keptEdits...)
    elision?.held.removeAll { $0.operation >= start }
  }

  /// Makes the operations from `start` on client-only: inside an array the kept JSON holds
  /// no elements of.
  func clientOnly(from start: Int) {
    guard start < operations.count else { return }
    if elision == nil { elision = Elision() }
    elision?.clientOnly.append(start..<operations.count)
  }

  /// An edit of the kept JSON alone.
  func keptEdit(_ operation: JSONPatch.Operation) {
    if elision == nil { elision = Elision() }
    elision?.keptEdits.append(operation)
  }

  /// What takes client-only operations back.
  func recordReversal(_ reversal: consuming JSONPatchReversal) {
    if elision == nil { elision = Elision() }
    elision?.reversal.append(reversal)
  }

  /// The operations replace values the kept JSON does not hold (a left-out array's elements):
  /// their reversal cannot be recorded.
  func markReversalIncomplete() {
    guard recordsReversal else { return }
    if elision == nil { elision = Elision() }
    elision?.reversal.markIncomplete()
  }

  /// Forgets the arrays at or under `path`: what is published there is about to be replaced
  /// by something their logs do not describe. Returns whether one of them was left out (the
  /// kept JSON there lacks elements the clients hold; the reversal is then incomplete).
  @discardableResult
  func invalidateMarks(under path: JSONPointer) -> Bool {
    guard !marks.isEmpty else { return false }
    var leftOut = false
    if path.isRoot {
      leftOut = marks.values.contains { $0.elidedCount != nil }
      marks.removeAll()
    } else {
      for (key, mark) in marks where path.isPrefix(of: key) {
        if mark.elidedCount != nil { leftOut = true }
        marks[key] = nil
      }
    }
    if leftOut { markReversalIncomplete() }
    return leftOut
  }
}

import JSON
import Synchronization

/// An ordered collection of elements with unique ids, found by id in O(1), that remembers
/// its recent changes so a store can publish an edit of one element of 100,000 without
/// looking at the other 99,999.
///
/// It encodes as a plain JSON array. Use it for any collection in a view that can grow
/// large: the store's publisher re-encodes only the elements logged as touched since the
/// last publication and writes the patch operations for them directly (see `ViewPublisher`).
///
/// ```swift
/// struct State: Codable, Equatable, Sendable {
///   var notes: IdentifiedArray<Note> = []
/// }
/// state.notes.append(note)
/// state.notes[id: note.id]?.text = "edited"   // logged as one update
/// state.notes.remove(id: note.id)
/// ```
///
/// How it stays cheap: the change log lives in a small reference object, the *lineage*,
/// shared by copies of the array. A copy that is mutated while shared forks a new lineage
/// (remembering where it forked), so a (lineage, revision) pair names exactly one content,
/// and two arrays holding the same lineage object are equal without comparing elements.
public struct IdentifiedArray<Element: Identifiable & Sendable>: Sendable
where Element.ID: Sendable {
  /// The elements' id type.
  public typealias ID = Element.ID

  /// In chunks, so that editing a copy copies one chunk, not every element (ChunkedElements).
  /// Read by inlinable code: a feature's loop over the elements (a count of pending notes as a
  /// state is decoded) is then specialized for its element type, not a generic call each.
  @usableFromInline var elements: ChunkedElements<Element>
  private var positions: PositionIndex<ID>
  private var lineage: Lineage<Element>

  /// An empty array.
  public init() {
    elements = ChunkedElements()
    positions = PositionIndex([:])
    lineage = Lineage()
  }

  /// The elements in order; when ids repeat, the last element with an id wins, at the
  /// position of the first.
  public init<S: Sequence>(_ elements: S) where S.Element == Element {
    // Built directly rather than by `updateOrAppend`, which records every insertion in a
    // lineage that is replaced at the end anyway and hashes each id twice: opening a large
    // state makes one of these per element.
    var built: [Element] = []
    built.reserveCapacity(elements.underestimatedCount)
    var positions = [ID: Int](minimumCapacity: elements.underestimatedCount)
    for element in elements {
      let next = built.count
      // One hash per id: the `default:` subscript inserts `next` when the id is new.
      let position = Self.value(&positions[element.id, default: next])
      if position == next {
        built.append(element)
      } else {
        built[position] = element
      }
    }
    self.elements = ChunkedElements(built)
    self.positions = PositionIndex(positions)
    lineage = Lineage()
  }

  /// An array of `elements`, whose ids are known to be distinct, with their index.
  /// Usable from inlinable code: the decoding initializers below build the index in the
  /// caller's module, specialized for its element type.
  @usableFromInline
  init(distinct elements: ChunkedElements<Element>, positions: PositionIndex<ID>) {
    self.elements = elements
    self.positions = positions
    lineage = Lineage()
  }

  @inline(__always)
  private static func value(_ slot: inout Int) -> Int { slot }

  /// Calls `body` with each position in `range` and its element, in order, a chunk at a time.
  func forEach(in range: Range<Int>, _ body: (Int, Element) throws -> Void) rethrows {
    try elements.forEach(in: range, body)
  }

  /// The ids, in order.
  public var ids: [ID] { map(\.id) }

  /// The elements as a plain array.
  public var elementsArray: [Element] { elements.flat }

  /// The position of the element with `id`.
  public func index(id: ID) -> Int? { positions[id] }

  /// The element with `id`. Setting an element replaces it in place (or appends it when
  /// the id is new); setting `nil` removes it.
  public subscript(id id: ID) -> Element? {
    get { positions[id].map { elements[$0] } }
    set {
      if let newValue {
        if newValue.id != id { remove(id: id) }
        updateOrAppend(newValue)
      } else {
        remove(id: id)
      }
    }
  }

  /// Replaces the element with the same id in place, or appends it; returns the replaced
  /// element.
  @discardableResult
  public mutating func updateOrAppend(_ element: Element) -> Element? {
    prepareToWrite()
    if let position = positions[element.id] {
      let old = elements[position]
      elements[position] = element
      lineage.record(.update(index: position, id: element.id, old: old))
      return old
    }
    elements.append(element)
    positions[element.id] = elements.count - 1
    lineage.record(.insert(index: elements.count - 1, id: element.id))
    return nil
  }

  /// Appends `element`, or replaces the element with its id in place.
  public mutating func append(_ element: Element) { updateOrAppend(element) }

  /// Inserts `element` at `position`; an element with the same id is removed first.
  public mutating func insert(_ element: Element, at position: Int) {
    remove(id: element.id)
    prepareToWrite()
    let position = Swift.min(Swift.max(position, 0), elements.count)
    elements.insert(element, at: position)
    reindex(from: position)
    lineage.record(.insert(index: position, id: element.id))
  }

  /// Removes and returns the element with `id`.
  @discardableResult
  public mutating func remove(id: ID) -> Element? {
    guard let position = positions[id] else { return nil }
    return remove(at: position)
  }

  /// Removes and returns the element at `position`.
  @discardableResult
  public mutating func remove(at position: Int) -> Element {
    prepareToWrite()
    let element = elements.remove(at: position)
    positions[element.id] = nil
    reindex(from: position)
    lineage.record(.remove(index: position, id: element.id, old: element))
    return element
  }

  /// Removes every element.
  public mutating func removeAll() {
    // Nothing to remove is no change: a reset in the log would make a publisher that keeps no
    // elements (`ArrayElision`) replace the array for nothing.
    guard elements.count > 0 else { return }
    prepareToWrite()
    let removed = ids
    elements.removeAll()
    positions.removeAll()
    lineage.record(.reset(removed: removed))
  }

  /// Removes the elements that match.
  public mutating func removeAll(where shouldRemove: (Element) throws -> Bool) rethrows {
    var position = elements.count - 1
    while position >= 0 {
      if try shouldRemove(elements[position]) { remove(at: position) }
      position -= 1
    }
  }

  /// Sorts the elements in place.
  public mutating func sort(by areInIncreasingOrder: (Element, Element) throws -> Bool) rethrows {
    var sorted = elements.flat
    try sorted.sort(by: areInIncreasingOrder)
    // An order that did not change is no change (see `removeAll()`).
    if sorted.indices.allSatisfy({ sorted[$0].id == elements[$0].id }) { return }
    prepareToWrite()
    elements = ChunkedElements(sorted)
    reindex(from: 0)
    lineage.record(.reset(removed: []))
  }

  /// Changes the element with `id` in place; does nothing when there is none.
  public mutating func modify(id: ID, _ body: (inout Element) throws -> Void) rethrows {
    guard let position = positions[id] else { return }
    prepareToWrite()
    // The element before the change, for the log: a publisher that keeps no JSON of the
    // elements diffs the new one against it (and a history takes the change back with it).
    let old = elements[position]
    try body(&elements[position])
    if elements[position].id != id {
      // The body changed the id: keep the index honest.
      positions[id] = nil
      positions[elements[position].id] = position
      lineage.record(.reset(removed: [id]))
    } else {
      lineage.record(.update(index: position, id: id, old: old))
    }
  }

  private mutating func reindex(from position: Int) {
    for index in position..<elements.count { positions[elements[index].id] = index }
  }

  /// Forks the change log if another copy of this array shares it, so that the log of the
  /// lineage being written describes this array's content only.
  private mutating func prepareToWrite() {
    if !isKnownUniquelyReferenced(&lineage) { lineage = lineage.fork() }
  }

  /// Where this array's content stands: what a publisher remembers between publications.
  var revision: ArrayRevision { lineage.revision }

  /// The changes from the content at `revision` to this one, oldest first, or `nil` when
  /// the log does not reach back that far (or `revision` belongs to another history).
  func changes(since revision: ArrayRevision) -> ArraySlice<ArrayChange<Element>>? {
    lineage.changes(since: revision)
  }

  /// Whether both arrays share the same lineage object: then they are equal.
  func isIdentical(to other: Self) -> Bool { lineage === other.lineage }

  /// Whether the index is split in two (`PositionIndex`), for tests.
  var isIndexSplit: Bool { positions.isSplit }

  /// Whether the index holds exactly each element's id at its position, for tests.
  var indexMatchesElements: Bool {
    positions.count == elements.count
      && indices.allSatisfy { positions[elements[$0].id] == $0 }
  }
}

extension IdentifiedArray: RandomAccessCollection {
  /// The position of the first element (0).
  @inlinable public var startIndex: Int { 0 }
  /// The position past the last element.
  @inlinable public var endIndex: Int { elements.count }
  /// The element at `position`.
  @inlinable public subscript(position: Int) -> Element { elements[position] }
}

extension IdentifiedArray: ExpressibleByArrayLiteral {
  /// The listed elements, in order.
  public init(arrayLiteral elements: Element...) { self.init(elements) }
}

extension IdentifiedArray: Equatable where Element: Equatable {
  /// Equal elements in equal order; O(1) for copies that share a history.
  public static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.isIdentical(to: rhs) || lhs.elements == rhs.elements
  }
}

extension IdentifiedArray: Hashable where Element: Hashable {
  /// Hashes the elements in order.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(count)
    for element in self { hasher.combine(element) }
  }
}

extension IdentifiedArray: Encodable where Element: Encodable {
  /// Encodes as a plain array of the elements (a view publisher's walk is told the changes
  /// instead, see `publishIfWalked(by:)`; its first encoding may leave a large array's
  /// elements out, `ArrayElision`).
  public func encode(to encoder: any Encoder) throws {
    if try publishIfWalked(by: encoder) { return }
    var container = encoder.unkeyedContainer()
    if isLeftOut(by: encoder) { return }
    for element in self { try container.encode(element) }
  }
}

extension IdentifiedArray: Decodable where Element: Decodable {}

// Its `init(from:)` reads the decoder only as `ParallelDecodedArray` does: an array left as
// text is decoded straight from its text.
extension IdentifiedArray: ParallelArrayDecodable where Element: Decodable {}

extension IdentifiedArray where Element: Decodable {
  /// Decodes a plain array; repeated ids are a decoding error. A large array is decoded on two
  /// threads when the decoder can (`ParallelDecodedArray`).
  @inlinable
  public init(from decoder: any Decoder) throws {
    try self.init(
      decoded: ParallelDecodedArray<Element>(from: decoder).elements,
      codingPath: decoder.codingPath)
  }
}

extension IdentifiedArray {
  /// The elements of a decoded array, in their chunks, with their index; repeated ids are a
  /// decoding error at `codingPath`.
  ///
  /// Inlinable, so that a feature decoding a large array of its own element type (a
  /// `Decodable` state's `init(from:)` that decodes `[Note]` and then calls this) builds the
  /// index and the chunks in code specialized for that type. Reached through `Decodable` alone, the index is
  /// built by generic code, which looks up the metadata of the id and of its dictionary for
  /// every element. A large array's index is built on two threads (`PositionIndex`).
  @inlinable
  public init(decoded: [Element], codingPath: [any CodingKey]) throws {
    guard let positions = PositionIndex<ID>.building(decoded) else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: codingPath, debugDescription: "the ids of the elements repeat"))
    }
    self.init(distinct: ChunkedElements(decoded), positions: positions)
  }
}

extension IdentifiedArray: CustomStringConvertible {
  /// The elements, as an array prints them.
  public var description: String { elements.flat.description }
}

/// A point in the history of an `IdentifiedArray`'s content.
struct ArrayRevision: Equatable, Sendable {
  var lineage: UInt64
  var number: UInt64
}

/// One logged change, with the position it had when it was made, and for an update or a
/// removal the element as it was before: a publisher that leaves the elements to the state
/// (`ViewPublisher`) diffs an update against it and takes changes back with it.
enum ArrayChange<Element: Identifiable & Sendable>: Sendable where Element.ID: Sendable {
  case update(index: Int, id: Element.ID, old: Element)
  case insert(index: Int, id: Element.ID)
  case remove(index: Int, id: Element.ID, old: Element)
  /// Too much changed to say position by position (sort, remove all): publish the whole
  /// array. `removed` lists the ids that left, for cancelling their effects.
  case reset(removed: [Element.ID])
}

/// The change log of an `IdentifiedArray` and of its unmutated copies.
///
/// Safety of `@unchecked Sendable`: the mutable fields are written only by
/// `IdentifiedArray`'s mutating methods right after `isKnownUniquelyReferenced` proved that
/// no other array value (hence no other thread) holds this object; shared objects are only
/// read, and their fields never change while shared.
final class Lineage<Element: Identifiable & Sendable>: @unchecked Sendable
where Element.ID: Sendable {
  private static var maximumLog: Int { 512 }
  private static func newID() -> UInt64 { lineageCounter.add(1, ordering: .relaxed).newValue }

  let id: UInt64
  private(set) var number: UInt64
  /// Changes after revision `logStart`, oldest first: `log[i]` made revision `logStart + i + 1`.
  private var log: [ArrayChange<Element>] = []
  private var logStart: UInt64
  /// The lineage this one forked from and the revision it forked at.
  private let parent: ArrayRevision?

  init() {
    id = Self.newID()
    number = 0
    logStart = 0
    parent = nil
  }

  private init(forkOf other: Lineage) {
    id = Self.newID()
    number = other.number
    log = other.log
    logStart = other.logStart
    parent = ArrayRevision(lineage: other.id, number: other.number)
  }

  func fork() -> Lineage { Lineage(forkOf: self) }

  var revision: ArrayRevision { ArrayRevision(lineage: id, number: number) }

  func record(_ change: ArrayChange<Element>) {
    number += 1
    log.append(change)
    if log.count > Self.maximumLog {
      let drop = log.count - Self.maximumLog / 2
      log.removeFirst(drop)
      logStart += UInt64(drop)
    }
  }

  func changes(since revision: ArrayRevision) -> ArraySlice<ArrayChange<Element>>? {
    // Revisions of the parent up to the fork point are this lineage's own past too.
    let isOwnPast =
      revision.lineage == id
      || (revision.lineage == parent?.lineage && revision.number <= (parent?.number ?? 0))
    guard isOwnPast, revision.number >= logStart, revision.number <= number else { return nil }
    return log[Int(revision.number - logStart)...]
  }
}

private let lineageCounter = Atomic<UInt64>(0)

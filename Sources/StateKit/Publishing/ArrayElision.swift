import JSON

/// What a publisher remembers of an `IdentifiedArray` it published: the revision, and whether
/// its JSON holds the elements.
struct ArrayMark: Equatable, Sendable {
  var revision: ArrayRevision
  /// The element count when the publisher's JSON holds none of the elements (an empty array in
  /// their place: the typed state is their only copy); nil when it holds them all.
  var elidedCount: Int?
}

/// Which `IdentifiedArray`s a view publisher leaves to the state instead of keeping their
/// elements as JSON, and, while a view is first encoded, the ones it left out.
///
/// Why: per element, the JSON tree (an object buffer, a box per string) weighs several times
/// the typed element, and the publisher used to keep all of it next to the state: two full
/// copies of a large collection, three with a journal of a private state that is not the view
/// (docs/architecture.md, "The open at scale"). A left-out array is published from its change
/// log, which keeps each element as it was before a change, and encoded when someone asks for
/// the whole view.
///
/// Only arrays of `threshold` elements or more are left out, decided whenever an array is
/// published whole (the first view, a reset, a log that no longer reaches back): a small view
/// is published exactly as before, including the local diff of a sorted array, which a left-out
/// array replaces whole. Tests lower the threshold to 0 to run the left-out path everywhere.
final class ArrayElision {
  /// Elements from which an array is left out; `Int.max` leaves none out.
  @TaskLocal static var threshold = 1_000

  /// The key under which a first encoding carries the elision (`JSONValueEncoder`'s
  /// `userInfo`), for `IdentifiedArray.encode(to:)` to find. (The initializer is failable in
  /// form only; without a key nothing is left out.)
  static let key = CodingUserInfoKey(rawValue: "stateserver.arrayElision")

  let threshold: Int
  /// The arrays left out by the encoding, by path, with their counts.
  private(set) var leftOut: [JSONPointer: Int] = [:]

  init(threshold: Int) { self.threshold = threshold }

  /// Whether an array of `count` elements at `codingPath` is left out (and noted): only when
  /// its path is made of names, since a view walk reaches no array inside a plain array.
  func leavesOut(count: Int, at codingPath: [any CodingKey]) -> Bool {
    guard count >= threshold, !codingPath.contains(where: { $0.intValue != nil }) else {
      return false
    }
    leftOut[JSONPointer(tokens: codingPath.map(\.stringValue))] = count
    return true
  }
}

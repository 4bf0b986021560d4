import JSON

// The params of the branching methods (Connection+Branching.swift).

/// `history/skip {store, version, skipped}`.
struct SkipParams: Decodable {
  var store: String
  /// The version the action to toggle made.
  var version: UInt64
  /// True turns it off, false on again.
  var skipped: Bool
}

/// `store/fork {store, version?, as?, persist?}`.
struct ForkParams: Decodable {
  var store: String
  /// The version whose state the fork starts from; the current one when absent.
  var version: UInt64?
  /// The fork's id; generated (`counter-1`) when absent.
  var `as`: String?
  var persist: Bool?
}

/// `state/diff {store, other}`.
struct DiffParams: Decodable {
  var store: String
  var other: String
}

/// `state/blame {store, path}`.
struct BlameParams: Decodable {
  var store: String
  var path: PointerParam
  /// How many earlier touches to return at most (100 by default).
  var limit: UInt64?
}

import JSON
import StateKit

/// A client's interest in a store's state, or in one subtree of it (`path`).
@StateActor
final class Subscription {
  let path: JSONPointer
  /// `path` as the client wrote it (`""` for the whole state), echoed in patches.
  let pathText: String
  /// `path.isRoot`, kept: the publication's fan-out reads it with no call while the subscription
  /// is borrowed from its array (a call would have it retained around it).
  let isRoot: Bool
  /// The version the client's copy of the subtree is at: the `from` of its next patch. For a
  /// path, versions that left the subtree unchanged are skipped.
  var version: UInt64
  /// Whether the subtree exists at `version` (a subscription starts on an existing value; a
  /// later change may remove it and add it back).
  var exists = true

  init(path: JSONPointer, version: UInt64) {
    self.path = path
    self.pathText = path.description
    self.isRoot = path.isRoot
    self.version = version
  }
}

import JSON

/// The value of a patch operation that the publisher did not encode: a large `IdentifiedArray`
/// whose elements it leaves to the state (`ArrayElision`), replaced whole (an action that resets
/// or sorts it, a `store/rewind`, a `history/skip`). The operation stands in the patch without
/// its `"value"` member (an `add` or `replace` no RFC 6902 patch holds, so it cannot pass for
/// one); the value is written from the state as text when the patch is written (`write(to:)`),
/// or encoded for whoever needs the patch as JSON (`Publication.filled(with:)`).
///
/// Held only while the publication is handed on: it shares the array with the state, so a
/// value kept past the state's next change would make that change copy the whole array.
public struct HeldValue: Sendable {
  /// The position of the operation in the publication's patch.
  public let operation: Int
  /// Where the value goes (the operation's path).
  public let path: JSONPointer
  private let source: Source

  /// The view the value is read from, type erased. Isolated to the state's actor, where the
  /// view lives: the value is written there, before the state moves on.
  @StateActor
  private final class Source {
    let write: (inout JSONWriter) throws -> Void
    let encode: () throws -> JSON?

    init(
      write: @escaping (inout JSONWriter) throws -> Void, encode: @escaping () throws -> JSON?
    ) {
      self.write = write
      self.encode = encode
    }
  }

  /// The array at `place` in `view`, the view just published.
  @StateActor
  init<View: Encodable>(_ place: PatchWalk.HeldPlace, in view: View) {
    operation = place.operation
    path = place.path
    let path = place.path
    source = Source(
      write: { try ViewText<View>.writeArray(at: path, of: view, to: &$0) },
      encode: { try ArrayLocator.encode(.whole, ofArrayAt: path, in: view) })
  }

  /// Writes the value as text, its elements a batch at a time (on two threads for a large one):
  /// no tree of them is built.
  @StateActor
  public func write(to writer: inout JSONWriter) throws { try source.write(&writer) }

  /// The value as a JSON tree.
  @StateActor
  public func encoded() throws -> JSON {
    guard let value = try source.encode() else {
      throw EncodingError.invalidValue(
        path.description,
        .init(codingPath: [], debugDescription: "no array at \(path) in the published view"))
    }
    return value
  }

  /// Whether `operation` is one whose value is held: an `add` or `replace` without a value.
  public static func isHeld(_ operation: JSON) -> Bool {
    guard case .object(let object) = operation, object["value"] == nil else { return false }
    switch object["op"] {
    case .string("replace")?, .string("add")?: return true
    default: return false
    }
  }

  /// `operation` with `value` in its place.
  public static func filling(_ operation: JSON, with value: JSON) -> JSON {
    guard case .object(var object) = operation else { return operation }
    object["value"] = value
    return .object(object)
  }

  /// `operation` without its value: the form a held one has in a patch.
  public static func holding(_ operation: JSON) -> JSON {
    guard case .object(var object) = operation else { return operation }
    object["value"] = nil
    return .object(object)
  }

  /// The same value, for the operation at `position` of another patch (a subscription's).
  public func placed(at position: Int) -> HeldValue {
    HeldValue(operation: position, path: path, source: source)
  }

  private init(operation: Int, path: JSONPointer, source: Source) {
    self.operation = operation
    self.path = path
    self.source = source
  }
}

extension Publication {
  /// The patch with each of `held` (the publishing store's `heldValues`) encoded in its place:
  /// for whoever needs it as JSON (a subscription to a part of the state, a replay comparing
  /// patches). Costs a tree of each held value; the patch itself when none is held.
  @StateActor
  public func filled(with held: [HeldValue]) throws -> [JSON] {
    guard !held.isEmpty else { return patch }
    var operations = patch
    for value in held where operations.indices.contains(value.operation) {
      operations[value.operation] = HeldValue.filling(
        operations[value.operation], with: try value.encoded())
    }
    return operations
  }

  /// The patch with `null` in place of each of `held`: for a reader that never reads those
  /// values (one that scopes the patch to a path where a held operation is either outside or
  /// replaces the path whole, and then asks the store for the value there).
  public func patch(holdingNullFor held: [HeldValue]) -> [JSON] {
    guard !held.isEmpty else { return patch }
    var operations = patch
    for value in held where operations.indices.contains(value.operation) {
      operations[value.operation] = HeldValue.filling(operations[value.operation], with: .null)
    }
    return operations
  }

  /// Whether a reader of the patch scoped to `path` reads one of `held`: one inside the part
  /// at `path` (below it, not at it or above it).
  public static func reads(_ held: [HeldValue], scopedTo path: JSONPointer) -> Bool {
    held.contains { path.isProperPrefix(of: $0.path) }
  }
}

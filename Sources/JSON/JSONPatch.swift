/// An RFC 6902 JSON Patch: a list of operations that turn one document into another.
///
/// Build one by hand, decode it from the wire form with ``init(json:)``, or compute one with
/// ``diff(from:to:)``; apply it with ``apply(to:)`` (atomic: all operations or none).
///
/// ```swift
/// var document: JSON = ["count": 1]
/// let patch = JSONPatch([.replace(path: "/count", value: 2), .add(path: "/done", value: true)])
/// try patch.apply(to: &document)   // ["count": 2, "done": true]
/// patch.json  // [{"op":"replace","path":"/count","value":2},{"op":"add","path":"/done",...}]
/// ```
public struct JSONPatch: Equatable, Sendable {
  /// One step of a patch, as RFC 6902 §4 defines it.
  public enum Operation: Equatable, Sendable {
    /// Inserts `value` at `path`: a new or existing object member, an array position
    /// (shifting later elements; `-` appends), or the whole document.
    case add(path: JSONPointer, value: JSON)
    /// Removes the value at `path`, which must exist.
    case remove(path: JSONPointer)
    /// Replaces the value at `path`, which must exist.
    case replace(path: JSONPointer, value: JSON)
    /// Removes the value at `from` and adds it at `path`; `path` must not lie inside `from`.
    case move(from: JSONPointer, path: JSONPointer)
    /// Adds a copy of the value at `from` at `path`.
    case copy(from: JSONPointer, path: JSONPointer)
    /// Fails the patch unless the value at `path` equals `value` (numbers by value, objects
    /// regardless of key order).
    case test(path: JSONPointer, value: JSON)

    /// The operation's name on the wire: `"add"`, `"remove"`, ...
    public var name: String {
      switch self {
      case .add: return "add"
      case .remove: return "remove"
      case .replace: return "replace"
      case .move: return "move"
      case .copy: return "copy"
      case .test: return "test"
      }
    }

    /// The pointer the operation writes to (or tests).
    public var path: JSONPointer {
      switch self {
      case .add(let path, _), .remove(let path), .replace(let path, _), .test(let path, _),
        .move(_, let path), .copy(_, let path):
        return path
      }
    }

    /// The source pointer of `move` and `copy`, `nil` for the others.
    public var from: JSONPointer? {
      switch self {
      case .move(let from, _), .copy(let from, _): return from
      default: return nil
      }
    }

    /// The operand of `add`, `replace` and `test`, `nil` for the others.
    public var value: JSON? {
      switch self {
      case .add(_, let value), .replace(_, let value), .test(_, let value): return value
      default: return nil
      }
    }

    /// The wire form: an object with keys in the order `op`, `path`, `from`, `value`.
    public var json: JSON { json(pathText: .string(path.description)) }

    /// The wire form, given the text of `path` (`.string(path.description)`, which this does
    /// not check): a publisher whose changes keep touching the same member makes that string,
    /// and its box, once instead of per operation. Consuming: a caller done with the operation
    /// hands its value over instead of copying it.
    public consuming func json(pathText: JSON) -> JSON {
      // One allocation, the object's, sized exactly and filled with keys known to be distinct
      // (member by member cost about 4 allocations, a values array one more): this runs for
      // every operation of every published patch. One `switch` that moves the operand out (the
      // `from` and `value` accessors, asked twice each, copied it three times).
      let name = nameValue
      switch consume self {
      case .add(_, let value), .replace(_, let value), .test(_, let value):
        var object = JSONObject(reservingCapacity: 3)
        object.appendUnindexed("op", name)
        object.appendUnindexed("path", pathText)
        object.appendUnindexed("value", value)
        return .object(object)
      case .move(let from, _), .copy(let from, _):
        var object = JSONObject(reservingCapacity: 3)
        object.appendUnindexed("op", name)
        object.appendUnindexed("path", pathText)
        object.appendUnindexed("from", .string(from.description))
        return .object(object)
      case .remove:
        var object = JSONObject(reservingCapacity: 2)
        object.appendUnindexed("op", name)
        object.appendUnindexed("path", pathText)
        return .object(object)
      }
    }

    /// Whether the operation's `path` is `pointer`; reads the path where it lies (the `path`
    /// accessor copies it out).
    public func hasPath(_ pointer: JSONPointer) -> Bool {
      switch self {
      case .add(let path, _), .remove(let path), .replace(let path, _), .test(let path, _),
        .move(_, let path), .copy(_, let path):
        return path == pointer
      }
    }

    /// `name` as a JSON string, made once per name: a JSON string is boxed, so making it here
    /// cost an allocation per published operation.
    private var nameValue: JSON {
      switch self {
      case .add: return Self.addName
      case .remove: return Self.removeName
      case .replace: return Self.replaceName
      case .move: return Self.moveName
      case .copy: return Self.copyName
      case .test: return Self.testName
      }
    }

    private static let addName = JSON.string("add")
    private static let removeName = JSON.string("remove")
    private static let replaceName = JSON.string("replace")
    private static let moveName = JSON.string("move")
    private static let copyName = JSON.string("copy")
    private static let testName = JSON.string("test")
  }

  /// The operations, applied in order.
  public var operations: [Operation]

  /// A patch of `operations`.
  public init(_ operations: [Operation] = []) {
    self.operations = operations
  }

  /// Whether the patch has no operations (applying it changes nothing).
  public var isEmpty: Bool { operations.isEmpty }

  /// The wire form: an array of operation objects.
  public var json: JSON {
    .array(operations.map(\.json))
  }

  /// Decodes the wire form: an array of operation objects. Members other than `op`, `path`,
  /// `from` and `value` are ignored, as RFC 6902 §4 requires.
  ///
  /// The error names the operation's index and the field at fault.
  public init(json: JSON) throws(JSONPatchError) {
    guard case .array(let elements) = json else {
      throw JSONPatchError(
        kind: .malformed, operationIndex: nil, field: nil,
        reason: "a patch is an array of operation objects, not \(json.kindDescription)")
    }
    var operations: [Operation] = []
    operations.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      operations.append(try Operation(json: element, index: index))
    }
    self.operations = operations
  }
}

extension JSONPatch.Operation {
  /// Decodes one operation object; `index` is its position in the patch, for errors.
  init(json: JSON, index: Int) throws(JSONPatchError) {
    func malformed(_ field: String?, _ reason: String) -> JSONPatchError {
      JSONPatchError(kind: .malformed, operationIndex: index, field: field, reason: reason)
    }
    func pointer(_ field: String) throws(JSONPatchError) -> JSONPointer {
      guard let member = json[field] else {
        throw malformed(field, "missing \"\(field)\" (a JSON Pointer string)")
      }
      guard case .string(let text) = member else {
        throw malformed(
          field, "\"\(field)\" must be a JSON Pointer string, not \(member.kindDescription)")
      }
      do {
        return try JSONPointer(parsing: text)
      } catch {
        throw malformed(field, error.description)
      }
    }
    func operand() throws(JSONPatchError) -> JSON {
      guard let value = json["value"] else {
        throw malformed("value", "missing \"value\" (any JSON value, null included)")
      }
      return value
    }
    guard case .object = json else {
      throw malformed(nil, "an operation is an object, not \(json.kindDescription)")
    }
    guard let op = json["op"] else {
      throw malformed("op", "missing \"op\" (one of add, remove, replace, move, copy, test)")
    }
    guard case .string(let name) = op else {
      throw malformed("op", "\"op\" must be a string, not \(op.kindDescription)")
    }
    switch name {
    case "add": self = .add(path: try pointer("path"), value: try operand())
    case "remove": self = .remove(path: try pointer("path"))
    case "replace": self = .replace(path: try pointer("path"), value: try operand())
    case "move": self = .move(from: try pointer("from"), path: try pointer("path"))
    case "copy": self = .copy(from: try pointer("from"), path: try pointer("path"))
    case "test": self = .test(path: try pointer("path"), value: try operand())
    default:
      throw malformed(
        "op", "unknown op \"\(name)\" (expected add, remove, replace, move, copy or test)")
    }
  }
}

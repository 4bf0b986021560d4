/// Why a `JSON` value did not decode into a Swift type: where, and what was expected.
///
/// The server answers it as `-32602` invalid params with `data.pointer` and `data.reason`.
///
/// ```swift
/// struct SetQuantity: Decodable { var id: String; var quantity: Int }
/// do { _ = try JSONValueDecoder().decode(SetQuantity.self, from: ["id": "a", "quantity": "2"]) }
/// catch {
///   error.pointer  // "/quantity"
///   error.reason   // "expected an integer, found a string"
/// }
/// ```
public struct JSONDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
  /// RFC 6901 JSON Pointer of the offending value, relative to the decoded root (`""` is the
  /// root itself; a missing field's pointer names the field).
  public var pointer: String
  /// What was expected and what was found, for a person.
  public var reason: String

  /// An error at `pointer` (build one from a coding path with ``pointer(_:)``).
  /// Set when the value is well-formed but its type refuses it from this sender (a client
  /// sending a child feature's internal action): the name of what was refused. The server
  /// answers such an error as a refused action (`-32003`), not as invalid params.
  public var refusedType: String? = nil

  public init(pointer: String, reason: String) {
    self.pointer = pointer
    self.reason = reason
  }

  /// The pointer and the reason, for logs.
  public var description: String {
    "cannot decode the value at '\(pointer)': \(reason)"
  }

  /// An RFC 6901 pointer from coding-path keys (their string values; array positions are
  /// keys whose string value is the index), with `~` and `/` escaped.
  public static func pointer(_ path: [any CodingKey]) -> String {
    var pointer = ""
    for key in path {
      pointer += "/"
      for scalar in key.stringValue.unicodeScalars {
        switch scalar {
        case "~": pointer += "~0"
        case "/": pointer += "~1"
        default: pointer.unicodeScalars.append(scalar)
        }
      }
    }
    return pointer
  }
}

extension JSONDecodingError {
  /// Any error met while decoding, as a pointer and a reason: `DecodingError`s (thrown by
  /// synthesized code, e.g. an unknown enum case) are translated; other errors (a type's own
  /// validation in `init(from:)`) are placed at `path`, where the failing value is.
  init(_ error: any Error, at path: @autoclosure () -> [any CodingKey]) {
    if let error = error as? JSONDecodingError {
      self = error
      return
    }
    guard let error = error as? DecodingError else {
      self.init(pointer: Self.pointer(path()), reason: String(describing: error))
      return
    }
    switch error {
    // Synthesized code says what it wanted as a Swift type: say it as the wire's kind.
    case .typeMismatch(let type, let context):
      // A synthesized enum's container holds anything but one key ("Invalid number of keys").
      let isEnumShape = context.debugDescription.contains("number of keys")
      self.init(
        pointer: Self.pointer(context.codingPath),
        reason: isEnumShape
          ? "expected an object with exactly one member, naming the case"
          : "expected \(WireExpectation.of(type))")
    case .valueNotFound(let type, let context):
      self.init(
        pointer: Self.pointer(context.codingPath),
        reason: "expected \(WireExpectation.of(type)), found null")
    case .keyNotFound(let key, let context):
      self.init(
        pointer: Self.pointer(context.codingPath + [key]),
        reason: "required field '\(key.stringValue)' is missing")
    case .dataCorrupted(let context):
      self.init(pointer: Self.pointer(context.codingPath), reason: context.debugDescription)
    @unknown default:
      self.init(pointer: Self.pointer(path()), reason: String(describing: error))
    }
  }
}

#if canImport(FoundationEssentials)
  import FoundationEssentials
#else
  import Foundation
#endif

/// What a Swift type looks like on the wire, for the "expected ..." of a decoding error: a
/// client reads `expected one of: local, server`, never `Cannot initialize Keep from invalid
/// String value mine`.
enum WireExpectation {
  /// `"an integer"`, `"one of: local, server"`, `"an array"`, ...; `"a value"` for a type whose
  /// wire form only its own `init(from:)` knows.
  static func of(_ type: Any.Type) -> String {
    if let values = rawValues(of: type) { return "one of: " + values.joined(separator: ", ") }
    switch type {
    case is Bool.Type: return "a boolean"
    case is String.Type, is Character.Type: return "a string"
    case is any FixedWidthInteger.Type: return "an integer"
    case is any BinaryFloatingPoint.Type, is Decimal.Type: return "a number"
    case is Date.Type: return "an ISO 8601 date string"
    case is URL.Type: return "a URL string"
    case is Data.Type: return "a Base64 string"
    case is any WireArray.Type: return "an array"
    case is any WireObject.Type: return "an object"
    case let optional as any WireOptional.Type: return of(optional.wrappedType) + " or null"
    default: return "a value"
    }
  }

  /// The raw values of a `CaseIterable` enum with `String` or `Int` raw values.
  static func rawValues(of type: Any.Type) -> [String]? {
    guard let enumeration = type as? any (CaseIterable & RawRepresentable).Type else { return nil }
    return rawValues(enumeration)
  }

  private static func rawValues<E: CaseIterable & RawRepresentable>(_ type: E.Type) -> [String]? {
    var values: [String] = []
    for value in E.allCases {
      switch value.rawValue {
      case let string as String: values.append(string)
      case let int as Int: values.append(String(int))
      default: return nil
      }
    }
    return values
  }

  /// The value found, for "..., found X": short strings and numbers themselves, else the kind.
  static func found(_ value: JSON) -> String {
    switch value {
    case .string(let string) where string.count <= 60:
      return "\"" + string + "\""
    case .integer(let integer): return String(integer)
    case .double(let double): return "\(double)"
    default: return value.kindDescription
    }
  }
}

/// Marks the standard collections that travel as arrays and objects.
protocol WireArray {}
extension Array: WireArray {}
extension Set: WireArray {}
extension ContiguousArray: WireArray {}

protocol WireObject {}
extension Dictionary: WireObject {}

protocol WireOptional {
  static var wrappedType: Any.Type { get }
}
extension Optional: WireOptional {
  static var wrappedType: Any.Type { Wrapped.self }
}

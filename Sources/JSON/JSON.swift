/// A JSON value: the one representation every layer above speaks.
///
/// Integers are kept exact as `Int64`; a number with a fraction or exponent is a `double`.
/// Objects keep their keys in insertion order (so output is stable and readable) and compare
/// equal regardless of key order, as JSON objects do.
///
/// ```swift
/// let value: JSON = ["type": "setQuantity", "id": "sku-7", "quantity": 2]
/// value["quantity"]  // .integer(2)
/// ```
public enum JSON: Sendable, Hashable {
  case null
  case bool(Bool)
  case integer(Int64)
  case double(Double)
  case string(String)
  case array([JSON])
  case object(JSONObject)
}

extension JSON {
  /// The member `key` of an object, or `nil` for a missing key or a value that is not an object.
  public subscript(key: String) -> JSON? {
    get {
      guard case .object(let object) = self else { return nil }
      return object[key]
    }
    set {
      guard case .object(var object) = self else { return }
      self = .null  // drop our reference so `object` is uniquely owned while it is edited
      object[key] = newValue
      self = .object(object)
    }
  }

  /// The element at `index` of an array, or `nil` when out of range or not an array.
  public subscript(index: Int) -> JSON? {
    guard case .array(let array) = self, array.indices.contains(index) else { return nil }
    return array[index]
  }

  /// The string, or `nil` when the value is not a string.
  public var stringValue: String? {
    if case .string(let s) = self { return s }
    return nil
  }

  /// The integer, or `nil` when the value is not an integer (a double is not converted).
  public var integerValue: Int64? {
    if case .integer(let i) = self { return i }
    return nil
  }

  /// The number as a `Double`, for integers and doubles alike.
  public var doubleValue: Double? {
    switch self {
    case .integer(let i): return Double(i)
    case .double(let d): return d
    default: return nil
    }
  }

  /// The boolean, or `nil` when the value is not a boolean.
  public var boolValue: Bool? {
    if case .bool(let b) = self { return b }
    return nil
  }

  /// The elements, or `nil` when the value is not an array.
  public var arrayValue: [JSON]? {
    if case .array(let a) = self { return a }
    return nil
  }

  /// The members, or `nil` when the value is not an object.
  public var objectValue: JSONObject? {
    if case .object(let o) = self { return o }
    return nil
  }

  /// Whether the value is `null`.
  public var isNull: Bool {
    if case .null = self { return true }
    return false
  }

  /// The JSON type's name as a person would say it, for error messages: "an object", "a string".
  public var kindDescription: String {
    switch self {
    case .null: return "null"
    case .bool: return "a boolean"
    case .integer: return "an integer"
    case .double: return "a number"
    case .string: return "a string"
    case .array: return "an array"
    case .object: return "an object"
    }
  }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
  ExpressibleByDictionaryLiteral
{
  /// `nil` is `null`.
  public init(nilLiteral: ()) { self = .null }
  /// `true` and `false`.
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  /// An integer literal is an exact `Int64`.
  public init(integerLiteral value: Int64) { self = .integer(value) }
  /// A float literal is a double.
  public init(floatLiteral value: Double) { self = .double(value) }
  /// A string literal.
  public init(stringLiteral value: String) { self = .string(value) }
  /// `[1, "a", nil]` is an array.
  public init(arrayLiteral elements: JSON...) { self = .array(elements) }
  /// `["a": 1]` is an object with its keys in the literal's order.
  public init(dictionaryLiteral elements: (String, JSON)...) {
    self = .object(JSONObject(elements))
  }
}

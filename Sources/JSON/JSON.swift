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

  public var stringValue: String? {
    if case .string(let s) = self { return s }
    return nil
  }

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

  public var boolValue: Bool? {
    if case .bool(let b) = self { return b }
    return nil
  }

  public var arrayValue: [JSON]? {
    if case .array(let a) = self { return a }
    return nil
  }

  public var objectValue: JSONObject? {
    if case .object(let o) = self { return o }
    return nil
  }

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
  public init(nilLiteral: ()) { self = .null }
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  public init(integerLiteral value: Int64) { self = .integer(value) }
  public init(floatLiteral value: Double) { self = .double(value) }
  public init(stringLiteral value: String) { self = .string(value) }
  public init(arrayLiteral elements: JSON...) { self = .array(elements) }
  public init(dictionaryLiteral elements: (String, JSON)...) {
    self = .object(JSONObject(elements))
  }
}

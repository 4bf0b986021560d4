import JSON
import StateKit

/// The fields in which two states differ, one line each, for a test failure:
/// `/count: expected 2, actual 1`.
struct StateDifference: CustomStringConvertible {
  var lines: [String] = []

  init(expected: some Encodable, actual: some Encodable) {
    guard let expectedJSON = try? JSONValueEncoder().encode(expected),
      let actualJSON = try? JSONValueEncoder().encode(actual)
    else {
      lines = ["  expected: \(expected)", "  actual:   \(actual)"]
      return
    }
    compare(expectedJSON, actualJSON, at: "")
    if lines.isEmpty {
      lines = ["  (equal when encoded; the difference is in a field that is not encoded)"]
    }
  }

  var description: String { lines.joined(separator: "\n") }

  private mutating func compare(_ expected: JSON?, _ actual: JSON?, at path: String) {
    guard expected != actual else { return }
    switch (expected, actual) {
    case (.object(let e)?, .object(let a)?):
      for key in e.keys { compare(e[key], a[key], at: path + "/" + key) }
      for key in a.keys where e[key] == nil { compare(nil, a[key], at: path + "/" + key) }
    case (.array(let e)?, .array(let a)?) where e.count == a.count:
      for index in e.indices { compare(e[index], a[index], at: path + "/\(index)") }
    default:
      let shownPath = path.isEmpty ? "(the whole state)" : path
      lines.append(
        "  \(shownPath): expected \(expected.map(render) ?? "(absent)"), "
          + "actual \(actual.map(render) ?? "(absent)")")
    }
  }
}

/// JSON as compact text, for failure messages only.
func render(_ json: JSON) -> String {
  switch json {
  case .null: return "null"
  case .bool(let value): return "\(value)"
  case .integer(let value): return "\(value)"
  case .double(let value): return "\(value)"
  case .string(let value): return "\"\(value)\""
  case .array(let values): return "[" + values.map(render).joined(separator: ",") + "]"
  case .object(let members):
    return "{" + members.members.map { "\"\($0.0)\":\(render($0.1))" }.joined(separator: ",")
      + "}"
  }
}

import Features
import Foundation
import JSON
import StateKit
import Testing

/// Issue 14: every type a reference feature uses is described; nothing is left as `{}`.
@Suite struct FeatureSchemaTests {
  static let descriptors = Features.all(
    backend: Backend(latencyMs: 0, clock: ContinuousClock()), clock: ContinuousClock())

  @Test(arguments: descriptors.map(\.name))
  func everyTypeOfTheFeatureIsDescribed(_ name: String) throws {
    let descriptor = try #require(Self.descriptors.first { $0.name == name })
    #expect(descriptor.schemaProblems == [])
    var empty: [String] = []
    Self.collectEmpty(descriptor.viewSchema, at: "/state", into: &empty)
    for (action, schema) in descriptor.actionSchemas {
      Self.collectEmpty(schema, at: "/actions/" + action, into: &empty)
    }
    for (event, schema) in descriptor.eventSchemas {
      Self.collectEmpty(schema, at: "/events/" + event, into: &empty)
    }
    #expect(empty == [], "schemas that accept anything")
    // Every action and event names its fields: no body is just `{"type": ...}`.
    for schema in Array(descriptor.actionSchemas.values) + Array(descriptor.eventSchemas.values) {
      #expect(schema["additionalProperties"] == false)
    }
  }

  /// The pointers of `{}` schemas in `schema`: any value of a keyword that holds schemas.
  static func collectEmpty(_ schema: JSON, at pointer: String, into found: inout [String]) {
    guard case .object(let object) = schema else { return }
    if object.count == 0 { found.append(pointer) }
    for (key, value) in object.members {
      switch key {
      case "properties":
        for (name, member) in value.objectValue?.members ?? JSONObject().members {
          collectEmpty(member, at: pointer + "/" + name, into: &found)
        }
      case "items", "additionalProperties":
        collectEmpty(value, at: pointer + "/*", into: &found)
      case "anyOf", "oneOf", "allOf":
        for (index, branch) in (value.arrayValue ?? []).enumerated() {
          collectEmpty(branch, at: pointer + "/\(key)/\(index)", into: &found)
        }
      default:
        continue
      }
    }
  }
}

import Foundation
import JSON
import StateKit
import Testing

/// Schemas derived from Swift types, including types the probe cannot fully see.
@Suite struct SchemaTests {
  struct Node: Codable, Equatable, Sendable {
    var name: String
    var children: [Node]
    var parent: Box?
  }
  final class Box: Codable, Equatable, Sendable {
    let node: Node?
    static func == (lhs: Box, rhs: Box) -> Bool { lhs.node == rhs.node }
  }
  enum Color: String, Codable, CaseIterable, Sendable {
    case red, green
  }
  struct Refusing: Codable, Equatable, Sendable {
    init() {}
    init(from decoder: any Decoder) throws {
      throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "never"))
    }
    func encode(to encoder: any Encoder) throws {}
  }
  struct Odd: Codable, Equatable, Sendable {
    var tree: Node
    var color: Color
    var when: Date
    var link: URL?
    var counts: [String: Int]
    var anything: JSON
    var refusing: Refusing?
    var ratio: Double
  }

  struct OddFeature: Feature {
    struct State: Codable, Equatable, Sendable {
      var odd = Odd(
        tree: Node(name: "root", children: [], parent: nil), color: .red,
        when: Date(timeIntervalSince1970: 0), link: nil, counts: [:], anything: nil,
        refusing: nil, ratio: 0.5)
    }
    enum Action: Codable, Equatable, Sendable {
      case paint(color: Color, at: Date)
      case graft(node: Node)
      case refuse(Refusing)
    }
    static let name = "odd"
    static let publicActions = ["paint", "graft", "refuse"]
    var initialState: State { State() }
    func reduce(into state: inout State, action: Action) -> Effect<Action, Never> { .none }
  }

  @Test func oddTypesGetHonestSchemasAndNeverCrash() {
    let descriptor = OddFeature().descriptor()
    let odd = descriptor.viewSchema["properties"]?["odd"]?["properties"]
    #expect(odd?["color"] == ["enum": ["red", "green"]])
    #expect(odd?["when"] == ["type": "string", "format": "date-time"])
    // Optional: absent or null, as the decoder accepts and features write.
    #expect(odd?["link"] == ["anyOf": [["type": "string", "format": "uri"], ["type": "null"]]])
    #expect(odd?["counts"] == ["type": "object", "additionalProperties": ["type": "integer"]])
    #expect(odd?["anything"] == [:])
    #expect(odd?["refusing"] == [:])
    #expect(odd?["ratio"] == ["type": "number"])
    let tree = odd?["tree"]
    #expect(tree?["properties"]?["name"] == ["type": "string"])
    #expect(tree?["properties"]?["children"]?["type"] == "array")
    #expect(descriptor.viewSchema["required"] == ["odd"])

    #expect(
      descriptor.actionSchemas["paint"]?["properties"]?["color"] == ["enum": ["red", "green"]])
    #expect(descriptor.actionSchemas["graft"]?["required"] == ["type", "node"])
    // A payload that cannot be probed still names its type.
    #expect(descriptor.actionSchemas["refuse"]?["properties"]?["type"] == ["const": "refuse"])
  }
}

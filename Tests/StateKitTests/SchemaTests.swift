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
    var initialState: State { State() }
    func reduce(into state: inout State, action: Action) -> Effect<Action, Never> { .none }
  }

  @Test func oddTypesGetHonestSchemasAndNeverCrash() {
    let descriptor = OddFeature().descriptor()
    let odd = descriptor.viewSchema["properties"]?["odd"]?["properties"]
    #expect(odd?["color"] == ["enum": ["red", "green"]])
    #expect(odd?["when"] == ["type": "string", "format": "date-time"])
    // Optional: the server writes nil as null, the key always present.
    #expect(odd?["link"] == ["anyOf": [["type": "string", "format": "uri"], ["type": "null"]]])
    #expect(
      descriptor.viewSchema["properties"]?["odd"]?["required"]?.arrayValue?.contains("link")
        == true)
    #expect(odd?["counts"] == ["type": "object", "additionalProperties": ["type": "integer"]])
    #expect(odd?["anything"] == [:])
    // What the probe cannot describe is `{}` there, and a problem that says where and why.
    #expect(odd?["refusing"] == [:])
    #expect(
      descriptor.schemaProblems.map(\.pointer) == ["/state/odd/refusing", "/actions/refuse/_0"])
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

  // MARK: Every type described, or a problem

  enum Plain: String, Codable, Sendable {
    case on, off
  }
  struct Holder: Codable, Equatable, Sendable {
    var switches: [Switch]
  }
  struct Switch: Codable, Equatable, Sendable {
    var state: Plain
  }

  struct PlainFeature: Feature {
    struct State: Codable, Equatable, Sendable {
      var holder = Holder(switches: [])
    }
    enum Action: Codable, Equatable, Sendable {
      case reset
    }
    static let name = "plain"
    var initialState: State { State() }
    func reduce(into state: inout State, action: Action) -> Effect<Action, Never> { .none }
  }

  /// Issue 14: an empty array of structs holding a plain String enum turned the whole state
  /// schema into `{}` and nothing said so.
  @Test func aStringEnumThatIsNotCaseIterableIsAProblemNotASilentEmptySchema() {
    let descriptor = PlainFeature().descriptor()
    let problems = descriptor.schemaProblems
    #expect(problems.map(\.pointer) == ["/state/holder/switches/*/state"])
    #expect(problems.first?.reason.contains("CaseIterable") == true)
  }

  struct NamingFeature: Feature {
    struct State: Codable, Equatable, Sendable {
      var name = ""
      var note: String? = nil
    }
    enum Action: Codable, Equatable, Sendable {
      case rename(name: String, note: String?)
    }
    static let name = "naming"
    var initialState: State { State() }
    func reduce(into state: inout State, action: Action) -> Effect<Action, Never> { .none }
  }

  enum Phase: Codable, Equatable, Sendable {
    case idle
    case failed(message: String)
  }

  struct PhaseFeature: Feature {
    struct State: Codable, Equatable, Sendable {
      var phase = Phase.idle
      var count = 0
    }
    enum Action: Codable, Equatable, Sendable { case reset }
    static let name = "phase"
    var initialState: State { State() }
    func reduce(into state: inout State, action: Action) -> Effect<Action, Never> { .none }
  }

  @Test func anEnumWithPayloadsInTheStateIsLooseAndAProblemItsSiblingsStayDescribed() {
    let descriptor = PhaseFeature().descriptor()
    #expect(descriptor.viewSchema["properties"]?["phase"] == ["type": "object"])
    #expect(descriptor.viewSchema["properties"]?["count"] == ["type": "integer"])
    #expect(descriptor.schemaProblems.map(\.pointer) == ["/state/phase"])
    #expect(descriptor.schemaProblems.first?.reason.contains("TaggedUnion") == true)
  }

  @Test func anOptionalIsRequiredAndNullableFromTheServerAndMayBeLeftOutByAClient() {
    let descriptor = NamingFeature().descriptor()
    #expect(descriptor.schemaProblems.isEmpty)
    #expect(descriptor.viewSchema["required"] == ["name", "note"])
    #expect(
      descriptor.viewSchema["properties"]?["note"] == [
        "anyOf": [["type": "string"], ["type": "null"]]
      ])
    let rename = descriptor.actionSchemas["rename"]
    #expect(rename?["required"] == ["type", "name"])
    #expect(rename?["properties"]?["note"] == ["anyOf": [["type": "string"], ["type": "null"]]])
  }

  enum Shape: Codable, Equatable, Sendable, TaggedUnion {
    case circle(radius: Double)
    case dot
    enum Tag: String, CaseIterable, Codable { case circle, dot }
    static let tagKey = "kind"
    private enum CodingKeys: String, CodingKey { case kind, radius }
    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      switch try container.decode(Tag.self, forKey: .kind) {
      case .circle: self = .circle(radius: try container.decode(Double.self, forKey: .radius))
      case .dot: self = .dot
      }
    }
    func encode(to encoder: any Encoder) throws {
      var container = encoder.container(keyedBy: CodingKeys.self)
      switch self {
      case .circle(let radius):
        try container.encode(Tag.circle, forKey: .kind)
        try container.encode(radius, forKey: .radius)
      case .dot: try container.encode(Tag.dot, forKey: .kind)
      }
    }
  }

  struct Wrapped: Codable, Equatable, Sendable, SchemaDescribing {
    var inner: String
    init(inner: String) { self.inner = inner }
    init(from decoder: any Decoder) throws {
      guard case .string(let text) = try JSON(from: decoder) else {
        throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "string"))
      }
      inner = text
    }
    func encode(to encoder: any Encoder) throws { try JSON.string(inner).encode(to: encoder) }
    static func wireSchema() throws(SchemaProblem) -> JSON { ["type": "string", "minLength": 0] }
  }

  struct ShapesFeature: Feature {
    struct State: Codable, Equatable, Sendable {
      var shapes: [Shape] = []
      var label = Wrapped(inner: "")
    }
    enum Action: Codable, Equatable, Sendable {
      case draw(shape: Shape)
    }
    static let name = "shapes"
    var initialState: State { State() }
    func reduce(into state: inout State, action: Action) -> Effect<Action, Never> { .none }
  }

  @Test func aTaggedUnionIsAOneOfWithItsTagAConstAndADescribedTypeGivesItsOwnSchema() {
    let descriptor = ShapesFeature().descriptor()
    #expect(descriptor.schemaProblems.isEmpty)
    let circle: JSON = [
      "type": "object", "properties": ["kind": ["const": "circle"], "radius": ["type": "number"]],
      "required": ["kind", "radius"], "additionalProperties": false,
    ]
    let dot: JSON = [
      "type": "object", "properties": ["kind": ["const": "dot"]], "required": ["kind"],
      "additionalProperties": false,
    ]
    #expect(descriptor.viewSchema["properties"]?["shapes"]?["items"] == ["oneOf": [circle, dot]])
    #expect(descriptor.actionSchemas["draw"]?["properties"]?["shape"] == ["oneOf": [circle, dot]])
    #expect(descriptor.viewSchema["properties"]?["label"] == ["type": "string", "minLength": 0])
  }
}

import JSON
import Testing

@testable import StateServer

/// Bindings from schemas: the shapes the probe writes, and refusals instead of loose types.
@Suite struct CodegenTests {
  static let feature: JSON = [
    "name": "my-notes",
    "actions": ["rename"],
    "events": [],
    "schema": [
      "state": [
        "type": "object",
        "properties": [
          "title": ["anyOf": [["type": "string"], ["type": "null"]]],
          "mode": ["enum": ["a", "b"]],
          "tags": ["type": "object", "additionalProperties": ["type": "integer"]],
          "data-1": [:],
        ],
        "required": ["title", "mode", "tags", "data-1"],
      ],
      "actions": [
        "rename": [
          "type": "object",
          "properties": [
            "type": ["const": "rename"],
            "title": ["anyOf": [["type": "string"], ["type": "null"]]],
          ],
          "required": ["type"], "additionalProperties": false,
        ]
      ],
      "events": [:],
    ],
  ]

  @Test func typeScriptKeepsOptionalApartFromNullAndQuotesOddNames() throws {
    let text = TypeScriptBindings.render([try FeatureBinding(listed: Self.feature)])
    #expect(text.contains("export type MyNotesState = {"))
    #expect(text.contains("  title: string | null;\n"))
    #expect(text.contains("  mode: \"a\" | \"b\";\n"))
    #expect(text.contains("  tags: { [key: string]: number };\n"))
    #expect(text.contains("  \"data-1\": FeatureJSON;\n"))
    #expect(text.contains("  title?: string | null;\n"))
    #expect(text.contains("export type MyNotesEvent = never;"))
    #expect(text.contains("  \"my-notes\": { state: MyNotesState;"))
  }

  @Test func pythonRefusesAFieldThatIsNoIdentifierRatherThanLooseningIt() throws {
    #expect(throws: CodegenError.self) {
      try PythonBindings.render([try FeatureBinding(listed: Self.feature)])
    }
  }

  @Test func pythonLetsAClientLeaveOutAnOptionalActionField() throws {
    let feature: JSON = [
      "name": "my-notes", "actions": ["rename"], "events": [],
      "schema": [
        "state": ["type": "object", "properties": ["n": ["type": "number"]], "required": ["n"]],
        "actions": ["rename": Self.feature["schema"]?["actions"]?["rename"] ?? [:]],
        "events": [:],
      ],
    ]
    let text = try PythonBindings.render([try FeatureBinding(listed: feature)])
    #expect(text.contains("class MyNotesState(TypedDict):\n    n: float\n"))
    #expect(
      text.contains(
        "class _MyNotesRenameActionRequired(TypedDict):\n    type: Literal[\"rename\"]\n"))
    #expect(
      text.contains(
        "class MyNotesRenameAction(_MyNotesRenameActionRequired, total=False):\n"
          + "    title: Optional[str]\n"))
    #expect(text.contains("MyNotesEvent = NoReturn\n"))
  }

  @Test func aSchemaKeywordTheBindingsCannotSayIsAnError() {
    #expect(throws: CodegenError.self) {
      try BindingType(schema: ["type": "string", "pattern": "^x"], at: "")
    }
    #expect(throws: CodegenError.self) {
      try BindingType(schema: ["not": ["type": "null"]], at: "")
    }
    #expect(
      (try? BindingType(schema: ["type": "string", "format": "date-time"], at: "")) == .string)
  }
}

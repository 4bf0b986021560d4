import Features
import JSON
import StateKit
import Testing

/// `ChildAction` carries a child's action in the child's wire shape, and only its public ones.
@Suite struct ChildActionTests {
  func decode(_ wire: JSON) throws(JSONDecodingError) -> ChildAction<UsersFeature> {
    try JSONValueDecoder().decode(ChildAction<UsersFeature>.self, from: wire)
  }

  @Test func aPublicActionOfTheChildDecodesAndEncodesInItsOwnShape() throws {
    let select = try decode(["type": "select", "id": 1])
    #expect(select.action == .select(id: 1))
    #expect(try JSONValueEncoder().encode(select) == ["type": "select", "id": 1])
  }

  @Test func anInternalActionOfTheChildIsRefusedByName() {
    do {
      _ = try decode(["type": "loaded", "users": [], "source": "network"])
      Issue.record("an internal action decoded")
    } catch {
      #expect(error.pointer == "/type" && error.refusedType == "loaded")
    }
  }

  @Test func aBadFieldIsRefusedAtItsPointer() {
    do {
      _ = try decode(["type": "select", "id": "x"])
      Issue.record("a string id decoded")
    } catch {
      #expect(error.pointer == "/id")
    }
  }
}

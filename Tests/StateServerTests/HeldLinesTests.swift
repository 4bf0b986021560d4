import JSON
import StateKit
import Testing

@testable import StateServer

/// What the connection keeps of lines it has served.
@StateActor
@Suite struct HeldLinesTests {
  /// Once a read's lines are all served, the connection holds nothing of their array: a
  /// `store/open`'s whole parsed state would otherwise stay alive until the next read. Seen
  /// from the caller's copy of the array: writing to it copies the elements only while someone
  /// else still shares them.
  @Test func servedLinesAreLetGo() throws {
    let harness = try Harness()
    let request =
      #"{"jsonrpc":"2.0","id":1,"method":"dispatch","params":{"store":"fake","action":{"type":"increment"}}}"#
    var lines: [InboundLine] = [
      .message(try JSON(parsing: request)), .message(try JSON(parsing: request)),
    ]
    let before = lines.withUnsafeBufferPointer { $0.baseAddress }
    harness.connection.receive(read: lines, through: 2 * request.utf8.count)
    #expect(harness.connection.held.isEmpty)
    lines[0] = .oversize(bytes: 0, id: nil)
    let after = lines.withUnsafeBufferPointer { $0.baseAddress }
    #expect(before == after, "the connection still shares the served lines' array")
    #expect(try harness.written().count == 4)
  }
}

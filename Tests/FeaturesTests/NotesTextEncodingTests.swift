import Features
import Foundation
import JSON
import Testing

/// The notes' published view, written by `JSONTextEncoder`, is the text the tree path writes:
/// what a `store/open` of a large notes state answers with.
@Suite("JSONTextEncoder on the notes feature")
struct NotesTextEncodingTests {
  func treeText(_ value: some Encodable) throws -> [UInt8] {
    var writer = JSONWriter()
    try writer.write(JSONValueEncoder().encode(value))
    return writer.withUnsafeBytes { Array($0) }
  }

  func text(_ value: some Encodable) throws -> [UInt8] {
    var writer = JSONWriter()
    try JSONTextEncoder().encode(value, to: &writer)
    return writer.withUnsafeBytes { Array($0) }
  }

  let notes = (0..<40).map(Self.note)

  static func note(_ number: Int) -> Note {
    let start: Double = 1_795_974_399
    let created = Date(timeIntervalSince1970: start + Double(number) * 7.001)
    let updated = Date(timeIntervalSince1970: start + 3 + Double(number) * 7)
    let text = number % 5 == 0 ? "Zoë's \"fence\"\nline \(number)" : "note \(number)"
    let serverId: String? = number % 3 == 0 ? "s-\(number)" : nil
    let serverText: String? = number % 4 == 3 ? "server \(number)" : nil
    return Note(
      id: "note-\(number)", serverId: serverId, text: text, createdAt: created,
      updatedAt: updated, syncStatus: Note.SyncStatus.allCases[number % 4],
      serverText: serverText)
  }

  @Test func notesAreWrittenAsTheTreeWritesThem() throws {
    let bytes = try text(notes)
    #expect(bytes == (try treeText(notes)))
    #expect(String(decoding: bytes, as: UTF8.self).contains(#""serverId":null"#))
    for note in notes { #expect(try text(note) == (try treeText(note))) }
  }

  @Test func theViewIsWrittenAsTheTreeWritesIt() throws {
    let json: JSON = [
      "notes": .array(try notes.map { try JSONValueEncoder().encode($0) }),
      "sync": [
        "status": "offline", "pending": 27, "lastSyncedAt": "2026-11-29T17:46:39.250Z",
        "message": "no network",
      ],
    ]
    let view = try JSONValueDecoder().decode(NotesFeature.View.self, from: json)
    #expect(try text(view) == (try treeText(view)))
    #expect(try text(view.notes) == (try treeText(view.notes)))
  }

  @Test func elementsOfTheViewsArrayAreItsText() throws {
    var writer = JSONWriter()
    writer.append(UInt8(ascii: "["))
    try JSONTextEncoder().encode(elements: notes[0..<16], to: &writer)
    try JSONTextEncoder().encode(elements: notes[16...], continuing: true, to: &writer)
    writer.append(UInt8(ascii: "]"))
    #expect(writer.withUnsafeBytes { Array($0) } == (try treeText(notes)))
  }
}

// `json-tool codable [ITERATIONS]`: the Codable bridge against Foundation's JSON coders, on a
// typical published view (a cart) and a typical action, both ways through text:
//   struct -> text: JSONValueEncoder + serialized()   vs  JSONEncoder.encode
//   text -> struct: JSON(parsing:) + JSONValueDecoder vs  JSONDecoder.decode
// Prints one line per measurement, "name operations_per_second", on stdout.
// JSON_TOOL_CODABLE_ONLY=notes-tree or notes-text measures only the notes' text, by the tree
// path or by JSONTextEncoder, ITERATIONS times (for a profiler: callgrind, perf).
import Foundation
import JSON

enum CodableCommand {
  struct Item: Codable, Equatable {
    var id: String
    var name: String
    var quantity: Int
    var price: Double
  }

  enum Coupon: Codable, Equatable {
    case none
    case applying(code: String)
    case applied(code: String, discount: Double)
  }

  struct CartView: Codable, Equatable {
    var items: [Item]
    var coupon: Coupon
    var total: Double
    var badgeCount: Int
    var note: String?
    var updatedAt: Date
  }

  /// The shape of the notes feature's `Note` (json-tool does not link the features).
  struct Note: Codable, Equatable {
    enum SyncStatus: String, Codable { case pendingUpload, synchronized, failed, conflict }
    var id: String
    var serverId: String?
    var text: String
    var createdAt: Date
    var updatedAt: Date
    var syncStatus: SyncStatus
    var serverText: String?

    init(number: Int) {
      id = "note-\(number)"
      text = "Field note \(number): checked the north fence line, two posts need replacing soon."
      createdAt = Date(timeIntervalSince1970: 1_795_974_399 + Double(number))
      updatedAt = createdAt + 3
      syncStatus = number % 3 == 0 ? .synchronized : .pendingUpload
    }
  }

  struct SetQuantity: Codable, Equatable {
    var id: String
    var quantity: Int
  }

  static let view = CartView(
    items: [
      Item(id: "sku-1", name: "Coffee beans", quantity: 2, price: 12.5),
      Item(id: "sku-7", name: "Zoë's mug", quantity: 1, price: 19.99),
      Item(id: "sku-9", name: "Filter papers", quantity: 3, price: 3.2),
    ],
    coupon: .applied(code: "WELCOME", discount: 5), total: 49.08, badgeCount: 6, note: nil,
    updatedAt: Date(timeIntervalSince1970: 1_795_974_399))

  static func run(_ arguments: [String]) -> Int32 {
    let iterations = arguments.first.flatMap(Int.init) ?? 200_000
    do {
      try measure(iterations)
      return 0
    } catch {
      FileHandle.standardError.write(Data("json-tool codable: \(error)\n".utf8))
      return 1
    }
  }

  static func measure(_ iterations: Int) throws {
    let foundationEncoder = JSONEncoder()
    foundationEncoder.dateEncodingStrategy = .iso8601
    let foundationDecoder = JSONDecoder()
    foundationDecoder.dateDecodingStrategy = .iso8601
    let action = SetQuantity(id: "sku-7", quantity: 3)
    let actionText = try JSONValueEncoder().encode(action).serialized()
    let actionData = Data(actionText)

    var bytes = 0
    if let only = ProcessInfo.processInfo.environment["JSON_TOOL_CODABLE_ONLY"] {
      var writer = JSONWriter(capacity: 1 << 20)
      let notes = (0..<100_000).map { Note(number: $0) }
      let tree = only == "notes-tree"
      try report("encode 100k notes to text, \(only) (notes/s)", iterations, scale: notes.count) {
        writer.truncate(to: 0)
        if tree {
          for start in stride(from: 0, to: notes.count, by: 1_024) {
            let batch = notes[start..<min(start + 1_024, notes.count)]
            guard case .array(let elements) = try JSONValueEncoder().encode(Array(batch)) else {
              continue
            }
            for element in elements { try writer.write(element) }
          }
        } else {
          try JSONTextEncoder().encode(elements: notes, to: &writer)
        }
      }
      return
    }
    try report("encode view, JSONValueEncoder + serialized()", iterations) {
      bytes &+= try JSONValueEncoder().encode(view).serialized().count
    }
    try report("encode view, Foundation JSONEncoder", iterations) {
      bytes &+= try foundationEncoder.encode(view).count
    }
    try report("encode view, JSONValueEncoder to JSON only", iterations) {
      if case .object(let object) = try JSONValueEncoder().encode(view) { bytes &+= object.count }
    }
    var quantity = 0
    try report("decode action, JSON(parsing:) + JSONValueDecoder", iterations) {
      let json = try JSON(parsing: actionText)
      quantity &+= try JSONValueDecoder().decode(SetQuantity.self, from: json).quantity
    }
    try report("decode action, Foundation JSONDecoder", iterations) {
      quantity &+= try foundationDecoder.decode(SetQuantity.self, from: actionData).quantity
    }
    // A large published view: what a store with a big keyed collection re-encodes per change.
    let many = (0..<100_000).map {
      Item(id: "sku-\($0)", name: "Item \($0)", quantity: $0 % 7, price: Double($0) / 4)
    }
    try report("encode 100k items, JSONValueEncoder (items/s)", 10, scale: many.count) {
      if case .array(let array) = try JSONValueEncoder().encode(many) { bytes &+= array.count }
    }
    try report("encode 100k items, Foundation JSONEncoder (items/s)", 10, scale: many.count) {
      bytes &+= try foundationEncoder.encode(many).count
    }
    // The same, to text: the tree then its writing, against the text encoder's one pass.
    var writer = JSONWriter(capacity: 1 << 20)
    try report(
      "encode 100k items to text, JSONValueEncoder + write (items/s)", 10, scale: many.count
    ) {
      writer.truncate(to: 0)
      try writer.write(JSONValueEncoder().encode(many))
      bytes &+= writer.count
    }
    try report("encode 100k items to text, JSONTextEncoder (items/s)", 10, scale: many.count) {
      writer.truncate(to: 0)
      try JSONTextEncoder().encode(many, to: &writer)
      bytes &+= writer.count
    }
    // Notes as a large state holds them (two dates, all different, an enum, two nil optionals), a batch of
    // 1,024 at a time as the answer of a `store/open` writes them.
    let notes = (0..<100_000).map { Note(number: $0) }
    try report(
      "encode 100k notes to text, JSONValueEncoder + write (notes/s)", 10, scale: notes.count
    ) {
      writer.truncate(to: 0)
      for start in stride(from: 0, to: notes.count, by: 1_024) {
        let batch = notes[start..<min(start + 1_024, notes.count)]
        guard case .array(let elements) = try JSONValueEncoder().encode(Array(batch)) else {
          continue
        }
        for element in elements { try writer.write(element) }
      }
      bytes &+= writer.count
    }
    try report(
      "encode 100k notes to text, JSONTextEncoder elements (notes/s)", 10, scale: notes.count
    ) {
      writer.truncate(to: 0)
      try JSONTextEncoder().encode(elements: notes, to: &writer)
      bytes &+= writer.count
    }
    // Keeps the optimizer from dropping the work above.
    if bytes == 0 || quantity == 0 { FileHandle.standardError.write(Data("no work\n".utf8)) }
    let checked = try JSONValueDecoder().decode(
      CartView.self, from: JSONValueEncoder().encode(view))
    if checked != view { throw CocoaError(.coderInvalidValue) }
  }

  static func report(
    _ name: String, _ iterations: Int, scale: Int = 1, _ body: () throws -> Void
  ) rethrows {
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<iterations { try body() }
    let seconds = Double((clock.now - start) / .nanoseconds(1)) / 1e9
    print("\(name)\t\(Int(Double(iterations * scale) / seconds))")
  }
}

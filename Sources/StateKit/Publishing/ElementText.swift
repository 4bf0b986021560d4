import JSON

/// An `IdentifiedArray` found in a view (`ArrayLocator.elementText(ofArrayAt:in:)`), its
/// element type hidden, that writes runs of its elements as text: what lets another thread
/// write some of them (`ElementPipeline`).
///
/// Safe to use from two threads at once: it holds a copy of the array, a `Sendable` value that
/// both only read, and each run is encoded by an encoder and written by a writer of the
/// caller's own.
struct ElementText: Sendable {
  /// How many elements the array has.
  let count: Int
  private let writeRun: @Sendable (Range<Int>, inout JSONWriter) throws -> Void

  init<Element: Encodable & Identifiable & Sendable>(_ array: IdentifiedArray<Element>)
  where Element.ID: Sendable {
    count = array.count
    writeRun = { range, writer in
      // Straight to text (no tree of the run first), by one encoder for the run: it keeps its
      // containers, and an object's keys, from one element to the next.
      let elements = JSONTextEncoder.ElementEncoder()
      try array.forEach(in: range) { index, element in
        if index > 0 { writer.append(UInt8(ascii: ",")) }
        try elements.encode(element, at: index, to: &writer)
      }
    }
  }

  /// Writes the elements in `range` (within `0..<count`) as the inside of the array's text
  /// writes them: each after a comma, but the array's first.
  func write(_ range: Range<Int>, to writer: inout JSONWriter) throws {
    try writeRun(range, &writer)
  }
}

import JSON

extension ViewPublisher {
  /// Writes the published view in full (`materialized(_:)`'s text), `view` being the view last
  /// published, without building the tree of a left-out array's elements: they are encoded a
  /// batch at a time and written as they come.
  ///
  /// A left-out array of `twoThreads` elements or more is written by two threads
  /// (`ElementPipeline`), to the same bytes.
  func write(
    _ view: View, to writer: inout JSONWriter, batch: Int = ViewText<View>.writtenBatch,
    twoThreadsFrom twoThreads: Int = ViewText<View>.twoThreadsFrom
  ) throws {
    try text(of: view).write(to: &writer, batch: batch, twoThreadsFrom: twoThreads)
  }

  /// What `write(_:to:)` writes, held apart from the publisher: a value that may be written
  /// later, on another thread when the view is `Sendable` (a compaction's snapshot). It shares
  /// the kept JSON, so the publisher's next update copies the parts of it that it edits.
  func text(of view: View) -> ViewText<View> {
    ViewText(
      json: json, view: view,
      leftOut: marks.compactMap { $0.value.elidedCount == nil ? nil : $0.key.tokens })
  }
}

/// A published view's text: the publisher's JSON, with the elements of each array it leaves
/// out (`leftOut`, by path) encoded from `view` a batch at a time as they are written.
struct ViewText<View: Encodable> {
  let json: JSON
  let view: View
  let leftOut: [[String]]

  /// Elements in a batch when a left-out array is written by two threads: the unit the state's
  /// thread and the worker take turns at (`ElementPipeline`).
  static var writtenBatch: Int { 1_024 }

  /// Elements from which a left-out array is written by two threads (`ElementPipeline`): below
  /// it, starting a worker costs more than it saves, and small views stay on one thread.
  static var twoThreadsFrom: Int { 8 * writtenBatch }

  /// Batches the worker of `ElementPipeline` may be ahead of the state's thread: enough that
  /// neither waits for the other in the steady state, few enough that the text waiting is a
  /// small part of the answer.
  static var pipelineWindow: Int { 8 }

  func write(
    to writer: inout JSONWriter, batch: Int = Self.writtenBatch,
    twoThreadsFrom twoThreads: Int = Self.twoThreadsFrom
  ) throws {
    guard !leftOut.isEmpty else {
      try writer.write(json)
      return
    }
    let batches = Batches(size: max(batch, 1), twoThreadsFrom: twoThreads)
    try write(json, at: [], to: &writer, batch: batches)
  }

  /// How a left-out array is written: `size` elements at a time, on two threads from
  /// `twoThreadsFrom` elements on.
  private struct Batches {
    let size: Int
    let twoThreadsFrom: Int
  }

  private func write(
    _ value: JSON, at path: [String], to writer: inout JSONWriter, batch: Batches
  ) throws {
    if leftOut.contains(path) {
      try writeElements(ofArrayAt: JSONPointer(tokens: path), to: &writer, batch: batch)
      return
    }
    guard leftOut.contains(where: { $0.starts(with: path) }) else {
      try writer.write(value)
      return
    }
    switch value {
    case .object(let object):
      writer.append(UInt8(ascii: "{"))
      for position in 0..<object.count {
        if position > 0 { writer.append(UInt8(ascii: ",")) }
        let key = object.key(at: position)
        writer.write(string: key)
        writer.append(UInt8(ascii: ":"))
        try write(object.value(at: position), at: path + [key], to: &writer, batch: batch)
      }
      writer.append(UInt8(ascii: "}"))
    case .array(let elements):
      writer.append(UInt8(ascii: "["))
      for (index, element) in elements.enumerated() {
        if index > 0 { writer.append(UInt8(ascii: ",")) }
        try write(element, at: path + [String(index)], to: &writer, batch: batch)
      }
      writer.append(UInt8(ascii: "]"))
    default:
      try writer.write(value)
    }
  }

  private func writeElements(
    ofArrayAt path: JSONPointer, to writer: inout JSONWriter, batch: Batches
  ) throws {
    try Self.writeArray(
      at: path, of: view, to: &writer, batch: batch.size, twoThreadsFrom: batch.twoThreadsFrom)
  }

  /// Writes the `IdentifiedArray` at `path` in `view` as text, its elements a batch at a time,
  /// on two threads from `twoThreadsFrom` elements on (`ElementPipeline`).
  static func writeArray(
    at path: JSONPointer, of view: View, to writer: inout JSONWriter,
    batch: Int = writtenBatch, twoThreadsFrom twoThreads: Int = twoThreadsFrom
  ) throws {
    writer.append(UInt8(ascii: "["))
    if let text = try ArrayLocator.elementText(ofArrayAt: path, in: view) {
      if text.count >= twoThreads {
        try ElementPipeline.write(text, batch: max(batch, 1), window: pipelineWindow, to: &writer)
      } else {
        try text.write(0..<text.count, to: &writer)
      }
    }
    writer.append(UInt8(ascii: "]"))
  }
}

extension ViewText: Sendable where View: Sendable {}

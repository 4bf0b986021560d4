extension ParallelDecoding {
  /// The array `index` of `deferred` decoded as `[Element]` straight from its text, each element
  /// parsed and then decoded (its tree let go at once): the first half of the elements on this
  /// thread, the second on a thread of its own, split where the scan found an element starting
  /// near the middle. The elements and the error are those of the decode of the parsed array;
  /// text that is not JSON is noted on `deferred` and thrown.
  static func decode<Element: Decodable & Sendable>(
    _ type: Element.Type, deferred index: Int, of deferred: DeferredArrays,
    by decoder: ValueDecoder
  ) throws -> [Element] {
    let array = deferred.arrays[index]
    let changes = deferred.changes(of: index)
    let text = ElementText(
      bytes: deferred.bytes, levelsAbove: array.levelsAbove, changes: changes)
    let path = decoder.codingPath.map(Self.sendableKey)
    let runs: [DecodedRun<Element>]
    if let split = array.split, split.index * 2 >= threshold {
      let first = DecodedRun<Element>()
      let second = DecodedRun<Element>()
      let worker = ElementThread {
        text.decode(
          Element.self, split.offset..<array.close, from: split.index, at: path, into: second)
      }
      text.decode(
        Element.self, (array.open + 1)..<split.offset, from: 0, at: path, into: first,
        endsWithComma: true)
      worker.join()
      runs = [first, second]
    } else {
      let run = DecodedRun<Element>()
      text.decode(Element.self, (array.open + 1)..<array.close, from: 0, at: path, into: run)
      runs = [run]
    }
    if runs.contains(where: \.malformed) {
      deferred.markMalformed()
      throw DeferredArrayError.malformed
    }
    // The text is of no more use when this was the last array to read: it goes before the
    // halves are joined, which needs room for the elements twice over for a moment.
    deferred.letGoOfText()
    for run in runs { if let error = run.error { throw error } }
    let count = runs.reduce(0) { $0 + $1.count }
    if let last = changes.keys.max(), last >= count {
      throw decoder.failure(
        at: nil, "a saved change names element \(last) of an array of \(count) elements")
    }
    return DecodedRun.joined(runs[0], runs.count == 2 ? runs[1] : DecodedRun())
  }
}

/// The text of a deferred array's elements, which each thread parses in its own range only.
///
/// Safety of `@unchecked Sendable` (it holds an unsafe buffer): the bytes are the message's,
/// which ``DeferredArrays`` keeps unchanged for as long as it lives, and it outlives the decode
/// (the decoding thread holds it until it has joined the other thread); they are only read.
private struct ElementText: @unchecked Sendable {
  let bytes: UnsafeRawBufferPointer
  let levelsAbove: Int
  /// Changes to apply to elements once parsed, by index (a journal replayed onto a snapshot).
  let changes: [Int: [JSONPatch.Operation]]

  /// The elements in `range` (which starts at an element or at white space before one, and
  /// ends at the array's `]`, or after a comma when `endsWithComma`), parsed, changed (when
  /// `changes` has changes for them) and decoded in order into `run`, the first at `index`. A failing decode is the run's error and the rest
  /// is still parsed (text that is not JSON wins over any decoding error); text that is not
  /// JSON stops it.
  func decode<Element: Decodable>(
    _ type: Element.Type, _ range: Range<Int>, from index: Int, at path: [CodingPathKey],
    into run: DecodedRun<Element>, endsWithComma: Bool = false
  ) {
    let decoder = ValueDecoder.standIn(at: path, consumes: true)
    guard
      var parser = JSONParser(
        UnsafeRawBufferPointer(rebasing: bytes[range]), allowDuplicateKeys: false,
        depthLimit: JSON.maximumDepth - levelsAbove)
    else { return }
    let end = range.count
    var index = index
    parser.skipWhitespace()
    if parser.offset == end {
      run.malformed = endsWithComma
      return
    }
    while true {
      var value: JSON
      do {
        value = try parser.parseValue()
      } catch {
        run.malformed = true
        return
      }
      guard parser.refusals.isEmpty else {
        run.malformed = true
        return
      }
      if run.error == nil, let operations = changes[index] {
        do {
          try JSONPatch(operations).apply(to: &value)
        } catch {
          run.error = decoder.failure(
            at: CodingPathKey(intValue: index), "a saved change does not apply: \(error)")
        }
      }
      if run.error == nil {
        do {
          run.append(
            try decoder.decodeChild(
              Element.self, from: consume value, key: CodingPathKey(intValue: index)))
        } catch {
          run.error = error
        }
      }
      index += 1
      parser.skipWhitespace()
      if parser.offset == end {
        run.malformed = endsWithComma
        return
      }
      guard parser.next() == UInt8(ascii: ",") else {
        run.malformed = true
        return
      }
      parser.skipWhitespace()
      if parser.offset == end {
        run.malformed = !endsWithComma
        return
      }
    }
  }
}

extension ParallelDecoding {
  /// The array `index` of `deferred` decoded as `[Element]` straight from its text, each element
  /// parsed and then decoded (its tree let go at once): the first half of the elements on this
  /// thread, the second on a thread of its own, split where the scan found an element starting
  /// near the middle. The elements and the error are those of the decode of the parsed array;
  /// text that is not JSON is noted on `deferred` and thrown.
  ///
  /// The scan counted the elements and the split's index, so each half decodes straight into
  /// its place in the one array, made up front at its final size: nothing is joined or moved.
  static func decode<Element: Decodable & Sendable>(
    _ type: Element.Type, deferred index: Int, of deferred: DeferredArrays,
    by decoder: ValueDecoder
  ) throws -> [Element] {
    let array = deferred.arrays[index]
    let changes = deferred.changes(of: index)
    let text = ElementText(
      bytes: deferred.bytes, levelsAbove: array.levelsAbove, changes: changes)
    let path = decoder.codingPath.map(Self.sendableKey)
    let whole = (array.open + 1)..<array.close
    var outcomes: [HalfOutcome] = []
    let elements = [Element](unsafeUninitializedCapacity: array.count) { buffer, initialized in
      let slots = ElementSlots(base: buffer.baseAddress)
      if let split = array.split, split.index * 2 >= threshold, split.index < array.count {
        let second = HalfOutcomeBox()
        let worker = ElementThread {
          second.outcome = text.decode(
            Element.self, split.offset..<array.close, into: slots,
            split.index..<array.count, at: path)
        }
        outcomes.append(
          text.decode(
            Element.self, whole.lowerBound..<split.offset, into: slots, 0..<split.index,
            at: path, endsWithComma: true))
        worker.join()
        outcomes.append(second.outcome)
      } else {
        outcomes.append(
          text.decode(Element.self, whole, into: slots, 0..<array.count, at: path))
      }
      if outcomes.allSatisfy({ $0.isComplete }) {
        initialized = array.count
      } else {
        // Each half decoded a prefix of its places; those go, and the array stays empty.
        for outcome in outcomes { slots.deinitialize(outcome.decoded) }
        initialized = 0
      }
    }
    if outcomes.contains(where: \.malformed) {
      deferred.markMalformed()
      throw DeferredArrayError.malformed
    }
    // The text is of no more use when this was the last array to read.
    deferred.letGoOfText()
    for outcome in outcomes { if let error = outcome.error { throw error } }
    if let last = changes.keys.max(), last >= array.count {
      throw decoder.failure(
        at: nil, "a saved change names element \(last) of an array of \(array.count) elements")
    }
    return elements
  }
}

/// What one half's decode did: the places it initialized (a prefix of its range), and the error
/// that stopped its decoding or the text that was not JSON.
private struct HalfOutcome: @unchecked Sendable {
  var decoded: Range<Int>
  var expected: Range<Int>
  var error: (any Error)?
  var malformed = false

  var isComplete: Bool { !malformed && error == nil && decoded == expected }
}

/// The second half's outcome, written by its thread and read after the join.
///
/// Safety of `@unchecked Sendable`: written once by the second thread before it ends, read
/// only by the thread that joined it (`pthread_join` orders the write before the read).
private final class HalfOutcomeBox: @unchecked Sendable {
  var outcome = HalfOutcome(decoded: 0..<0, expected: 0..<0)
}

/// The places of the array being made, which each half initializes in its own range only.
///
/// Safety of `@unchecked Sendable` (it holds an unsafe pointer): the array's buffer lives
/// through the whole decode (the closure of `init(unsafeUninitializedCapacity:)` joins the
/// second thread before it returns), and the two halves' ranges do not overlap, so no place is
/// ever touched by both threads.
private struct ElementSlots<Element>: @unchecked Sendable {
  let base: UnsafeMutablePointer<Element>?

  func initialize(_ position: Int, to element: consuming Element) {
    if let base { (base + position).initialize(to: element) }
  }

  func deinitialize(_ range: Range<Int>) {
    if let base { (base + range.lowerBound).deinitialize(count: range.count) }
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
  /// `changes` has changes for them) and decoded in order into `slots` at `places`. A failing
  /// decode is the outcome's error and the rest is still parsed (text that is not JSON wins
  /// over any decoding error); text that is not JSON, or more or fewer elements than `places`,
  /// stops it.
  func decode<Element: Decodable>(
    _ type: Element.Type, _ range: Range<Int>, into slots: ElementSlots<Element>,
    _ places: Range<Int>, at path: [CodingPathKey], endsWithComma: Bool = false
  ) -> HalfOutcome {
    var outcome = HalfOutcome(decoded: places.lowerBound..<places.lowerBound, expected: places)
    let decoder = ValueDecoder.standIn(at: path, consumes: true)
    guard
      var parser = JSONParser(
        UnsafeRawBufferPointer(rebasing: bytes[range]), allowDuplicateKeys: false,
        depthLimit: JSON.maximumDepth - levelsAbove)
    else { return outcome }
    let end = range.count
    var index = places.lowerBound
    parser.skipWhitespace()
    if parser.offset == end {
      outcome.malformed = endsWithComma || !places.isEmpty
      return outcome
    }
    while true {
      var value: JSON
      do {
        value = try parser.parseValue()
      } catch {
        outcome.malformed = true
        return outcome
      }
      guard parser.refusals.isEmpty, index < places.upperBound else {
        outcome.malformed = true
        return outcome
      }
      if outcome.error == nil, let operations = changes[index] {
        do {
          try JSONPatch(operations).apply(to: &value)
        } catch {
          outcome.error = decoder.failure(
            at: CodingPathKey(intValue: index), "a saved change does not apply: \(error)")
        }
      }
      if outcome.error == nil {
        do {
          slots.initialize(
            index,
            to: try decoder.decodeChild(
              Element.self, from: consume value, key: CodingPathKey(intValue: index)))
          outcome.decoded = places.lowerBound..<(index + 1)
        } catch {
          outcome.error = error
        }
      }
      index += 1
      parser.skipWhitespace()
      if parser.offset == end {
        outcome.malformed = endsWithComma || index != places.upperBound
        return outcome
      }
      guard parser.next() == UInt8(ascii: ",") else {
        outcome.malformed = true
        return outcome
      }
      parser.skipWhitespace()
      if parser.offset == end {
        outcome.malformed = !endsWithComma || index != places.upperBound
        return outcome
      }
    }
  }
}

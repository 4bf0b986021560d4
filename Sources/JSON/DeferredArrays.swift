import Synchronization

/// The large arrays of one message whose parse left them as text, to be parsed element by
/// element into the values decoded from them (``JSON/parsingDeferringArrays(_:under:)``): the
/// open of a large state then never builds the tree of its elements, and two threads share the
/// work. In the parsed message each such array is an empty array (a stand-in); a consuming
/// ``JSONValueDecoder`` decode that runs while this is ``current`` reads it from the text
/// instead, on two threads when its type allows (``ParallelDecodedArray``), or parses it into a
/// tree first when it does not.
///
/// The text is not checked before it is read: whoever served the message asks
/// ``isWellFormed()`` at the end, which checks the arrays nothing read, and answers the message
/// as its whole parse would (a parse error, a refused member) when any array was not JSON.
///
/// Safety of `@unchecked Sendable`: `bytes` are written by nobody once this is made (the
/// `keeper` owns them and frees them only when this goes, or when ``letGoOfText()`` finds them
/// of no more use, after which they are never read); what changes, which arrays were read,
/// whether one failed and the keeper, is behind a mutex.
package final class DeferredArrays: @unchecked Sendable {
  /// One array left as text.
  package struct Array: Sendable {
    /// Its place under the root the deferral started at (its member names, and indices).
    package var tokens: [String]
    /// The offsets of its `[` and its `]` in the message.
    var open: Int
    var close: Int
    /// Its elements, as the scan counted them (the parse checks the count).
    var count: Int
    /// Where the element nearest the middle starts, and its index.
    var split: (offset: Int, index: Int)?
    /// The containers open around its elements (the array's own included), which their
    /// nesting limit counts.
    var levelsAbove: Int
  }

  /// The whole message's bytes, until ``letGoOfText()``.
  package var bytes: UnsafeRawBufferPointer {
    precondition(!progress.withLock { $0.letGo }, "the text was let go")
    return text
  }
  private let text: UnsafeRawBufferPointer
  package let arrays: [Array]
  struct Progress {
    var read: [Bool]
    var malformed = false
    var keeper: (any AnyObject & Sendable)?
    /// Changes waiting for an element's parse, by array and element (DeferredArrays+Changes).
    var changes: [[Int: [JSONPatch.Operation]]]
    /// Whether ``letGoOfText()`` let go of the text.
    var letGo = false
  }
  let progress: Mutex<Progress>

  /// The decode of a state opened (or restored) from this text reads these arrays.
  @TaskLocal package static var current: DeferredArrays?

  /// Arrays of `bytes`, which `keeper` keeps (nil when the caller keeps them for this's life).
  package init(
    bytes: UnsafeRawBufferPointer, arrays: [Array], keeper: (any AnyObject & Sendable)?
  ) {
    self.text = bytes
    self.arrays = arrays
    progress = Mutex(
      Progress(
        read: Swift.Array(repeating: false, count: arrays.count), keeper: keeper,
        changes: Swift.Array(repeating: [:], count: arrays.count)))
  }

  /// Once every array was read and was JSON, the text is of no more use (nothing is answered
  /// from it): its keeper lets it go, so that it is not alive beside the answer. After this,
  /// ``bytes`` must not be read (``isWellFormed()`` no longer reads them: it is true).
  func letGoOfText() {
    // Taken out under the lock, freed after it.
    let keeper = progress.withLock { progress -> (any AnyObject & Sendable)? in
      guard !progress.malformed, !progress.read.contains(false) else { return nil }
      progress.letGo = true
      defer { progress.keeper = nil }
      return progress.keeper
    }
    _ = consume keeper
  }

  /// The array at `tokens`, taken for reading: nil when none is there or it was read already.
  func take(at tokens: [String]) -> Int? {
    guard let index = arrays.firstIndex(where: { $0.tokens == tokens }) else { return nil }
    return progress.withLock { progress in
      guard !progress.read[index] else { return nil }
      progress.read[index] = true
      return index
    }
  }

  /// Notes that an array's text is not JSON (or holds a member its parse refuses).
  func markMalformed() { progress.withLock { $0.malformed = true } }

  /// Whether every array is JSON: those read were (else their reading said so), and those
  /// nothing read are parsed now as they are read (on two threads), each element let go once
  /// parsed.
  package func isWellFormed() -> Bool {
    let unread = progress.withLock { progress in
      progress.malformed ? nil : arrays.indices.filter { !progress.read[$0] }
    }
    guard let unread else { return false }
    for index in unread {
      progress.withLock { $0.read[index] = true }
      let decoder = ValueDecoder.standIn(at: [], consumes: true)
      // Only text that is not JSON counts here (a change that does not apply is the decode's).
      _ = try? ParallelDecoding.decode(Skipped.self, deferred: index, of: self, by: decoder)
    }
    return !progress.withLock { $0.malformed }
  }

  /// An element parsed and let go.
  private struct Skipped: Decodable, Sendable {
    init(from decoder: any Decoder) {}
  }

  /// The array at `index` parsed into a tree (for a type that reads it other than as a
  /// ``ParallelDecodedArray``, or a change that reaches the whole array), with the changes
  /// waiting for its elements applied (DeferredArrays+Changes.swift); text that is not JSON
  /// is noted and thrown (``DeferredArrayError``), a change that does not apply is thrown
  /// (`JSONPatchError`).
  func tree(of index: Int) throws -> JSON {
    let array = arrays[index]
    let text = UnsafeRawBufferPointer(rebasing: bytes[array.open...array.close])
    guard
      var parser = JSONParser(
        text, allowDuplicateKeys: false, depthLimit: JSON.maximumDepth - array.levelsAbove + 1)
    else { throw DeferredArrayError.malformed }
    var value: JSON
    do {
      value = try parser.parseValue()
      guard parser.refusals.isEmpty, parser.offset == text.count else {
        throw DeferredArrayError.malformed
      }
    } catch {
      markMalformed()
      throw DeferredArrayError.malformed
    }
    let changes = progress.withLock { $0.changes[index] }
    guard !changes.isEmpty, case .array(var elements) = value else { return value }
    value = .null
    for (element, operations) in changes.sorted(by: { $0.key < $1.key }) {
      guard elements.indices.contains(element) else {
        throw JSONPatchError(
          kind: .invalidIndex, operationIndex: nil, field: "path",
          reason: "a change names element \(element) of an array of \(elements.count)")
      }
      try JSONPatch(operations).apply(to: &elements[element])
    }
    return .array(elements)
  }
}

/// A deferred array's text is not JSON: the message is answered as its whole parse answers it.
enum DeferredArrayError: Error, CustomStringConvertible {
  case malformed

  var description: String { "the array's text is not well-formed JSON" }
}

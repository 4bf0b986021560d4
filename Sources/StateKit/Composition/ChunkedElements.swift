/// The elements of an `IdentifiedArray`, in chunks of `chunkSize`: every chunk full but the
/// last, so that two equal sequences are chunked alike.
///
/// Why chunks: a copy of the array that is then edited (history's checkpoint of the state, a
/// rewind's restored state, a test's expected value) made the edit copy every element, once,
/// because Swift's arrays are copy-on-write, not persistent. Chunked, the first edit copies
/// the list of chunks (a reference per `chunkSize` elements) and each edit the chunk it
/// touches, once: 8 elements, so that edits spread over a large array copy little each
/// (chunks of 1,024 left history's cost per edit at 1,000,000 notes nearly where one whole copy
/// had put it, since 2,000 edits touched most chunks; 32 still faulted in most of a page per
/// edit; docs/architecture.md). Reading an element
/// costs a shift and a second bounds check. Insertions and removals inside the array rebuild
/// the chunks after the position; the array's index is rebuilt from there anyway.
@usableFromInline
struct ChunkedElements<Element> {
  /// Elements per chunk: a power of two, so that an index splits by a shift and a mask.
  @inlinable static var chunkShift: Int { 3 }
  @inlinable static var chunkSize: Int { 1 << chunkShift }

  @usableFromInline var chunks: [[Element]] = []
  @usableFromInline private(set) var count = 0

  init() {}

  /// Inlinable, so that a large decoded array (`IdentifiedArray.init(decoded:codingPath:)`) is
  /// copied into its chunks by code specialized for its element type: generic, each element's
  /// copy looked its type's metadata up.
  @inlinable
  init(_ elements: [Element]) {
    count = elements.count
    chunks.reserveCapacity((elements.count + Self.chunkSize - 1) / Self.chunkSize)
    elements.withUnsafeBufferPointer { source in
      var start = 0
      while start < source.count {
        let size = Swift.min(Self.chunkSize, source.count - start)
        // Element by element: `Array(elements[start..<end])` copied through the runtime,
        // which asks the element type's value witness for each copy.
        chunks.append(
          Array(unsafeUninitializedCapacity: size) { chunk, initialized in
            for offset in 0..<size {
              chunk.initializeElement(at: offset, to: source[start + offset])
            }
            initialized = size
          })
        start += size
      }
    }
  }

  @inlinable
  subscript(position: Int) -> Element {
    get { chunks[position >> Self.chunkShift][position & (Self.chunkSize - 1)] }
    _modify { yield &chunks[position >> Self.chunkShift][position & (Self.chunkSize - 1)] }
  }

  /// Calls `body` with each position in `range` and its element, chunk by chunk: generic code
  /// (the text of a view's elements, `ElementText`) that reads element by element through the
  /// subscript looked the metadata of a chunk's type up for every element.
  func forEach(in range: Range<Int>, _ body: (Int, Element) throws -> Void) rethrows {
    var position = range.lowerBound
    while position < range.upperBound {
      let chunk = chunks[position >> Self.chunkShift]
      let first = position & (Self.chunkSize - 1)
      let end = Swift.min(chunk.count, first + range.upperBound - position)
      for offset in first..<end {
        try body(position, chunk[offset])
        position += 1
      }
    }
  }

  /// Every element, in order, as one array (a copy: O(count)).
  var flat: [Element] {
    var all: [Element] = []
    all.reserveCapacity(count)
    for chunk in chunks { all += chunk }
    return all
  }

  mutating func append(_ element: Element) {
    if count & (Self.chunkSize - 1) == 0 {
      var chunk: [Element] = []
      chunk.reserveCapacity(Self.chunkSize)
      chunk.append(element)
      chunks.append(chunk)
    } else {
      chunks[chunks.count - 1].append(element)
    }
    count += 1
  }

  mutating func insert(_ element: Element, at position: Int) {
    var tail = removeTail(from: position)
    tail.insert(element, at: 0)
    for moved in tail { append(moved) }
  }

  mutating func remove(at position: Int) -> Element {
    var tail = removeTail(from: position)
    let removed = tail.removeFirst()
    for moved in tail { append(moved) }
    return removed
  }

  mutating func removeAll() {
    chunks = []
    count = 0
  }

  /// Removes and returns the elements from `position` on: the chunks before it are untouched.
  private mutating func removeTail(from position: Int) -> [Element] {
    let first = position >> Self.chunkShift
    guard first < chunks.count else { return [] }
    var tail = Array(chunks[first][(position & (Self.chunkSize - 1))...])
    for chunk in chunks[(first + 1)...] { tail += chunk }
    chunks[first].removeSubrange((position & (Self.chunkSize - 1))...)
    chunks.removeSubrange((first + 1)...)
    if chunks[first].isEmpty { chunks.removeLast() }
    count = position
    return tail
  }
}

extension ChunkedElements: Sendable where Element: Sendable {}

extension ChunkedElements: Equatable where Element: Equatable {
  /// Equal elements in equal order: chunk by chunk, since equal sequences are chunked alike.
  @usableFromInline
  static func == (lhs: Self, rhs: Self) -> Bool {
    lhs.count == rhs.count && lhs.chunks == rhs.chunks
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A `Decoder` that can decode a large array's elements on two threads: ``JSONValueDecoder``'s
/// is one. Reach it with `decoder as? any ParallelArrayDecoding` in code where the element type
/// is known to be `Sendable` (``ParallelDecodedArray`` does that for a keyed container's member).
///
/// Elements are decoded on a second thread only where that changes nothing but the time: an
/// array of thousands of elements, in a decode that shares no mutable state between elements (a
/// strict decode, ``JSONValueDecoder/refusesUnknownKeys``, records every object in one ledger,
/// so it stays on one thread). The elements, their order and the error (the first failing
/// element in index order, at its JSON Pointer) are those of `[Element](from: decoder)`.
public protocol ParallelArrayDecoding {
  /// The decoder's value as an array of `Element`s, as `[Element](from:)` decodes it.
  func decodeArray<Element: Decodable & Sendable>(of type: Element.Type) throws -> [Element]
}

/// An array decoded as ``ParallelArrayDecoding`` decodes it when the decoder can (a large one on
/// two threads), and as `[Element](from:)` otherwise.
///
/// A feature whose `init(from:)` reads a large collection of its own element type decodes
/// `ParallelDecodedArray<Note>` where it decoded `[Note]`, and takes its `elements`:
///
/// ```swift
/// let notes = try container.decode(ParallelDecodedArray<Note>.self, forKey: .notes).elements
/// ```
public struct ParallelDecodedArray<Element: Decodable & Sendable>: Decodable, Sendable,
  ParallelArrayDecodable
{
  /// The elements, in order.
  public var elements: [Element]

  /// Decodes an array, on two threads when the decoder can and the array is large.
  public init(from decoder: any Decoder) throws {
    if let parallel = decoder as? any ParallelArrayDecoding {
      elements = try parallel.decodeArray(of: Element.self)
    } else {
      elements = try [Element](from: decoder)
    }
  }
}

extension ValueDecoder: ParallelArrayDecoding {
  func decodeArray<Element: Decodable & Sendable>(of type: Element.Type) throws -> [Element] {
    if let deferredIndex, let deferred {
      // A strict decode records each object in its ledger, from a tree.
      guard ledger == nil else {
        value = try deferred.tree(of: deferredIndex)
        self.deferredIndex = nil
        return try [Element](from: self)
      }
      self.deferredIndex = nil
      return try ParallelDecoding.decode(
        Element.self, deferred: deferredIndex, of: deferred, by: self)
    }
    guard ledger == nil, case .array(var elements) = value,
      elements.count >= ParallelDecoding.threshold, elements.count >= 2
    else { return try [Element](from: self) }
    if consumes {
      // Handed over, as `unkeyedContainer()` hands them: `elements` is then their only holder,
      // and each is let go once decoded.
      guard takenMask == 0 else {
        throw failure(at: nil, "the array was already read once (this decode consumes it)")
      }
      markTaken(0)
      value = .array([])
    }
    return try ParallelDecoding.decode(Element.self, &elements, by: self)
  }
}

/// A type whose `init(from:)` reads its decoder only as ``ParallelDecodedArray`` does (through
/// ``ParallelArrayDecoding/decodeArray(of:)`` when the decoder is one), besides its coding
/// path: an array left as text (``DeferredArrays``) is then decoded straight from its text.
package protocol ParallelArrayDecodable {}

/// The two-thread decode of ``ParallelArrayDecoding``.
package enum ParallelDecoding {
  /// Elements from which an array is decoded on two threads; tests lower it to keep their
  /// arrays small.
  @TaskLocal package static var threshold = 4_096

  /// `elements` decoded as `[Element]` by `decoder`'s children: the first half on this thread
  /// with `decoder` itself, the second on a thread of its own with a stand-in for `decoder` (the
  /// same coding path, none of its state).
  ///
  /// Each half is decoded into blocks of memory of its own (``DecodedRun``), moved into one
  /// array at the end: a consuming decode lets the tree go as it goes, and the allocator carves
  /// each block out of what was just freed, then the joined array out of the freed tree. One
  /// array of the full size made up front took new memory instead, while the tree's was still
  /// held, and raised the open's peak by the size of the elements; a run per half growing by
  /// doubling needs, at each doubling, a free stretch twice its size, which the two threads
  /// compete for (both allocate from one arena), so the one that lost took a new mapping, and
  /// so did both wherever anything still alive sat inside the freed tree.
  static func decode<Element: Decodable & Sendable>(
    _ type: Element.Type, _ elements: inout [JSON], by decoder: ValueDecoder
  ) throws -> [Element] {
    let count = elements.count
    let middle = count / 2
    let consumes = decoder.consumes
    let path = decoder.codingPath.map(Self.sendableKey)
    // A borrowing decode only reads the elements (and must not copy them: the tree holds them
    // too); a consuming one owns them, uniquely (`decodeArray`), and lets each go.
    let body = { (input: UnsafeMutableBufferPointer<JSON>) throws -> [Element] in
      let halves = Halves(input: input, consumes: consumes)
      let first = DecodedRun<Element>()
      let second = DecodedRun<Element>()
      let worker = ElementThread {
        let standIn = ValueDecoder.standIn(at: path, consumes: consumes)
        halves.decode(Element.self, middle..<count, by: standIn, into: second)
      }
      halves.decode(Element.self, 0..<middle, by: decoder, into: first)
      worker.join()
      // What the sequential decode says: the first failure in index order.
      if let error = first.error { throw error }
      if let error = second.error { throw error }
      return DecodedRun.joined(first, second)
    }
    if consumes { return try elements.withUnsafeMutableBufferPointer { try body($0) } }
    return try elements.withUnsafeBufferPointer {
      try body(UnsafeMutableBufferPointer(mutating: $0))
    }
  }

  /// How many elements of `Element` fill a block of a half's decode: a block small enough to
  /// be carved out of what the decode has just freed, and below the size glibc maps on its own.
  package static func blockLength<Element>(of type: Element.Type) -> Int {
    Swift.max(1, 65_536 / Swift.max(1, MemoryLayout<Element>.stride))
  }

  /// `key` as a `Sendable` key with the same string (and, for a position, the same integer):
  /// what a coding path is read for is an error's JSON Pointer.
  static func sendableKey(_ key: any CodingKey) -> CodingPathKey {
    if let position = key.intValue, key.stringValue == String(position) {
      return CodingPathKey(intValue: position)
    }
    return CodingPathKey(stringValue: key.stringValue)
  }
}

/// One half's result: the elements it decoded, in order, and the error that stopped it. (The
/// second half is not told to stop when the first fails: an error costs the rest of its half,
/// and which error is said never depends on which thread was faster.)
///
/// The elements are kept in blocks of ``ParallelDecoding/blockLength(of:)`` elements, each
/// allocated when the last is full, and moved, not copied, into the joined array. Not an
/// `Array` appended to: this code is generic (the element type is the caller's), and there each
/// `append` looked up the array type's metadata in the runtime and ran the unspecialized append,
/// for every element.
///
/// Safety of `@unchecked Sendable` (it holds pointers and a mutable state): a run is written
/// only by the thread decoding its half; the thread that made it reads it only after joining
/// that thread (`pthread_join` orders the writes before the reads), or when that thread is
/// itself; the two never touch one run at the same time.
private final class DecodedRun<Element>: @unchecked Sendable {
  private var blocks: [UnsafeMutablePointer<Element>] = []
  /// Elements in the last block; every block before it is full.
  private var inLast = 0
  private let length = ParallelDecoding.blockLength(of: Element.self)
  private(set) var count = 0
  var error: (any Error)?

  func append(_ element: consuming Element) {
    if blocks.isEmpty || inLast == length {
      blocks.append(UnsafeMutablePointer<Element>.allocate(capacity: length))
      inLast = 0
    }
    (blocks[blocks.count - 1] + inLast).initialize(to: element)
    inLast += 1
    count += 1
  }

  /// The elements of `first` and then of `second` as one array, moved out of both.
  static func joined(_ first: DecodedRun, _ second: DecodedRun) -> [Element] {
    let total = first.count + second.count
    return [Element](unsafeUninitializedCapacity: total) { buffer, initialized in
      guard let base = buffer.baseAddress else { return }
      let firstCount = first.count
      first.moveAll(to: base)
      second.moveAll(to: base + firstCount)
      initialized = total
    }
  }

  /// Moves the elements to `target`, letting each block go once moved; they are then no
  /// longer this run's to free.
  private func moveAll(to target: UnsafeMutablePointer<Element>) {
    var moved = 0
    for (position, block) in blocks.enumerated() {
      let filled = position == blocks.count - 1 ? inLast : length
      (target + moved).moveInitialize(from: block, count: filled)
      block.deallocate()
      moved += filled
    }
    blocks = []
    inLast = 0
    count = 0
  }

  deinit {
    for (position, block) in blocks.enumerated() {
      block.deinitialize(count: position == blocks.count - 1 ? inLast : length)
      block.deallocate()
    }
  }
}

/// The elements of a two-thread decode, which each thread reads (and, in a consuming decode,
/// empties) in its own half only.
///
/// Safety of `@unchecked Sendable` (it holds an unsafe buffer): the thread that made it keeps
/// the buffer alive and unmoved until it has joined the other thread (the buffer is borrowed by
/// `withUnsafe...BufferPointer` around the whole decode, and the join happens inside it). Each
/// thread touches only the positions of its own range, `0..<middle` or `middle..<count`, which
/// do not overlap: no position is ever written by one thread while the other reads or writes
/// it. The buffer is written only in a consuming decode, which owns its elements alone (no
/// other holder reads them meanwhile); a borrowing decode only reads it.
private struct Halves: @unchecked Sendable {
  let input: UnsafeMutableBufferPointer<JSON>
  let consumes: Bool

  /// The elements at `range`, decoded in order into `run` until one fails, and the error.
  func decode<Element: Decodable>(
    _ type: Element.Type, _ range: Range<Int>, by decoder: ValueDecoder,
    into run: DecodedRun<Element>
  ) {
    for index in range {
      var element = JSON.null
      if consumes { swap(&element, &input[index]) } else { element = input[index] }
      do {
        run.append(
          try decoder.decodeChild(
            Element.self, from: consume element, key: CodingPathKey(intValue: index)))
      } catch {
        run.error = error
        return
      }
    }
  }
}

/// A thread running one closure, joined by the thread that made it. When no thread can be made,
/// the closure runs at `join()` on the caller's thread instead (the decode is then sequential).
final class ElementThread {
  private var thread = pthread_t()
  private var started = false
  private let body: @Sendable () -> Void

  init(_ body: @escaping @Sendable () -> Void) {
    self.body = body
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    started =
      pthread_create(
        &thread, nil,
        { raw in
          guard let raw else { return nil }
          Unmanaged<Box>.fromOpaque(raw).takeRetainedValue().body()
          return nil
        }, box) == 0
    if !started { Unmanaged<Box>.fromOpaque(box).release() }
  }

  func join() {
    guard started else { return body() }
    pthread_join(thread, nil)
  }

  private final class Box: Sendable {
    let body: @Sendable () -> Void
    init(_ body: @escaping @Sendable () -> Void) { self.body = body }
  }
}

extension ValueDecoder {
  /// A decoder with `path` as its coding path and nothing else: the parent of the elements a
  /// second thread decodes, so that their errors name the same JSON Pointer.
  static func standIn(at path: [CodingPathKey], consumes: Bool) -> ValueDecoder {
    var decoder = ValueDecoder(value: .null, parent: nil, key: nil, consumes: consumes)
    for key in path { decoder = ValueDecoder(value: .null, parent: decoder, key: key) }
    return decoder
  }
}

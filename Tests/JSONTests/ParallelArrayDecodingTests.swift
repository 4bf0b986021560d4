import FoundationEssentials
import JSON
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// `ParallelDecodedArray` (a large array's elements decoded on two threads): the same values,
/// order and errors as the sequential decode of `[Element]`, borrowing and consuming.
@Suite("Decoding: a large array on two threads")
struct ParallelArrayDecodingTests {
  /// The threads that decoded an `Item`, by the decode's tag (tests run at once).
  static let threads = ThreadRecord()

  /// A lock and what it guards. A pthread mutex rather than `Mutex`, whose lock the thread
  /// sanitizer does not see (`swift test --sanitize=thread` then reported every record as a
  /// race).
  ///
  /// Safety of `@unchecked Sendable`: `tags` is read and written only inside `withLock`, which
  /// holds `lock` for the whole access.
  final class ThreadRecord: @unchecked Sendable {
    // Allocated, so that its address is fixed (a stored property's is not promised); the
    // record is a static that lives as long as the tests, so it is never freed.
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var tags: [String: Set<UInt>] = [:]

    init() {
      lock.initialize(to: pthread_mutex_t())
      pthread_mutex_init(lock, nil)
    }

    func withLock<R>(_ body: (inout [String: Set<UInt>]) -> R) -> R {
      pthread_mutex_lock(lock)
      defer { pthread_mutex_unlock(lock) }
      return body(&tags)
    }
  }

  struct Item: Codable, Equatable, Sendable {
    var id: Int
    var name: String
    var at: Date
    var tags: [String]
    var size: Double?
    /// Names the decode, so `threads` can tell which threads decoded its items.
    var tag: String

    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      id = try container.decode(Int.self, forKey: .id)
      name = try container.decode(String.self, forKey: .name)
      at = try container.decode(Date.self, forKey: .at)
      tags = try container.decode([String].self, forKey: .tags)
      size = try container.decodeIfPresent(Double.self, forKey: .size)
      tag = try container.decode(String.self, forKey: .tag)
      if id < 0 {
        throw DecodingError.dataCorruptedError(
          forKey: .id, in: container, debugDescription: "a negative id")
      }
      let (thread, tag) = (UInt(pthread_self()), tag)
      ParallelArrayDecodingTests.threads.withLock { _ = $0[tag, default: []].insert(thread) }
    }
  }

  struct List: Decodable, Equatable, Sendable {
    var items: ParallelDecodedArray<Item>
    var count: Int

    static func == (lhs: Self, rhs: Self) -> Bool {
      lhs.items.elements == rhs.items.elements && lhs.count == rhs.count
    }
  }

  /// A list of `count` items tagged `tag`; `broken` positions get a name that is a number,
  /// `negative` ones an id the type refuses.
  func tree(_ count: Int, tag: String, broken: Set<Int> = [], negative: Set<Int> = []) -> JSON {
    let items: [JSON] = (0..<count).map { i in
      [
        "id": .integer(negative.contains(i) ? -1 : Int64(i)),
        "name": broken.contains(i) ? 7 : .string("item \(i)"),
        // Dates that repeat and change, as a state's do (each thread keeps the last it read).
        "at": .string("2026-01-0\(1 + i / 40 % 9)T00:00:0\(i % 3).000Z"),
        "tags": ["a", .string("t\(i)")], "size": i % 4 == 0 ? nil : .double(Double(i) / 2),
        "tag": .string(tag),
      ]
    }
    return ["items": .array(items), "count": .integer(Int64(count))]
  }

  /// The decode of `make()` as the sequential decode makes it, and on two threads: each
  /// borrowing and consuming.
  func decodes(threshold: Int = 64, _ make: () -> JSON) -> [Result<List, JSONDecodingError>] {
    var results: [Result<List, JSONDecodingError>] = []
    for limit in [Int.max, threshold] {
      ParallelDecoding.$threshold.withValue(limit) {
        let json = make()
        results.append(
          Result { () throws(JSONDecodingError) in
            try JSONValueDecoder().decode(List.self, from: json)
          })
        results.append(
          Result { () throws(JSONDecodingError) in
            try JSONValueDecoder().decode(List.self, consuming: make())
          })
      }
    }
    return results
  }

  func threadCount(_ tag: String) -> Int { Self.threads.withLock { $0[tag]?.count ?? 0 } }

  @Test func theSameValuesInTheSameOrder() throws {
    let results = decodes { tree(301, tag: "values") }
    let sequential = try results[0].get()
    #expect(sequential.items.elements.count == 301)
    #expect(sequential.items.elements.map(\.id) == Array(0..<301))
    for result in results.dropFirst() { #expect(try result.get() == sequential) }
  }

  @Test func aLargeArrayIsDecodedOnTwoThreads() throws {
    _ = try ParallelDecoding.$threshold.withValue(64) {
      try JSONValueDecoder().decode(List.self, consuming: tree(200, tag: "two"))
    }
    #expect(threadCount("two") == 2)
  }

  @Test func aSmallArrayAndAStrictDecodeStayOnOneThread() throws {
    _ = try ParallelDecoding.$threshold.withValue(64) {
      try JSONValueDecoder().decode(List.self, consuming: tree(63, tag: "small"))
    }
    #expect(threadCount("small") == 1)
    // A strict decode's ledger is shared by every object it reads.
    let strict = try ParallelDecoding.$threshold.withValue(64) {
      try JSONValueDecoder(refusesUnknownKeys: true).decode(
        List.self, consuming: tree(200, tag: "strict"))
    }
    #expect(strict.items.elements.count == 200)
    #expect(threadCount("strict") == 1)
  }

  /// Every decode fails where the sequential one does, with its words.
  func expectSameError(_ broken: Set<Int>, at pointer: String, tag: String) {
    let results = decodes { tree(200, tag: tag, broken: broken) }
    guard case .failure(let wanted) = results[0] else {
      Issue.record("expected the sequential decode to fail")
      return
    }
    #expect(wanted.pointer == pointer)
    #expect(wanted.reason == "expected a string, found an integer")
    for result in results.dropFirst() {
      guard case .failure(let error) = result else {
        Issue.record("expected the decode to fail at \(pointer)")
        continue
      }
      #expect(error == wanted)
    }
  }

  @Test func aFailureInTheFirstHalf() { expectSameError([17], at: "/items/17/name", tag: "e1") }

  @Test func aFailureInTheSecondHalf() {
    expectSameError([150], at: "/items/150/name", tag: "e2")
  }

  @Test func failuresInBothHalvesSayTheFirst() {
    expectSameError([160, 98, 100], at: "/items/98/name", tag: "e3")
  }

  @Test func aTypesOwnErrorInTheSecondHalfIsAtItsElement() throws {
    let results = decodes { tree(200, tag: "own", negative: [170]) }
    guard case .failure(let wanted) = results[0] else {
      Issue.record("expected the sequential decode to fail")
      return
    }
    #expect(wanted.pointer == "/items/170/id")
    for result in results.dropFirst() {
      #expect(throws: wanted) { try result.get() }
    }
  }

  @Test func notAnArrayIsTheSameError() {
    let results = decodes { ["items": ["a": 1], "count": 1] }
    guard case .failure(let wanted) = results[0] else {
      Issue.record("expected the sequential decode to fail")
      return
    }
    #expect(wanted.pointer == "/items")
    for result in results.dropFirst() { #expect(throws: wanted) { try result.get() } }
  }

  /// Each half is decoded in blocks: halves of more than two blocks give the same values, and
  /// a failure in a later block of either half the same error.
  @Test func halvesOfSeveralBlocksDecodeAndFailTheSame() throws {
    let block = ParallelDecoding.blockLength(of: Item.self)
    #expect(block > 1)
    let count = 5 * block + 3  // each half over two blocks, its last one partly filled
    let results = decodes { tree(count, tag: "blocks") }
    let sequential = try results[0].get()
    #expect(sequential.items.elements.map(\.id) == Array(0..<count))
    for result in results.dropFirst() { #expect(try result.get() == sequential) }
    for broken in [block + 1, count - 2] {
      let failures = decodes { tree(count, tag: "blocks-\(broken)", broken: [broken]) }
      for result in failures {
        guard case .failure(let error) = result else {
          Issue.record("expected the decode to fail at element \(broken)")
          continue
        }
        #expect(error.pointer == "/items/\(broken)/name")
      }
    }
  }

  @Test func theDefaultThresholdIsThousandsOfElements() throws {
    #expect(ParallelDecoding.threshold >= 1_000)
    let count = ParallelDecoding.threshold
    let list = try JSONValueDecoder().decode(List.self, consuming: tree(count, tag: "default"))
    #expect(list.items.elements.map(\.id) == Array(0..<count))
    #expect(threadCount("default") == 2)
  }

  /// Elements alive, by tag: each made by a decode and gone when its last holder went.
  static let lives = LifeRecord()

  /// Safety of `@unchecked Sendable`: `counts` is read and written only under `lock`.
  final class LifeRecord: @unchecked Sendable {
    private let lock = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var counts: [String: Int] = [:]

    init() {
      lock.initialize(to: pthread_mutex_t())
      pthread_mutex_init(lock, nil)
    }

    func add(_ change: Int, to tag: String) {
      pthread_mutex_lock(lock)
      counts[tag, default: 0] += change
      pthread_mutex_unlock(lock)
    }

    func count(_ tag: String) -> Int {
      pthread_mutex_lock(lock)
      defer { pthread_mutex_unlock(lock) }
      return counts[tag, default: 0]
    }
  }

  final class Life: Sendable {
    let tag: String
    init(_ tag: String) {
      self.tag = tag
      ParallelArrayDecodingTests.lives.add(1, to: tag)
    }
    deinit { ParallelArrayDecodingTests.lives.add(-1, to: tag) }
  }

  /// An element that counts its life; a negative number is refused.
  struct Counted: Decodable, Sendable {
    var number: Int
    var life: Life
    enum CodingKeys: String, CodingKey { case number, tag }
    init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      number = try container.decode(Int.self, forKey: .number)
      if number < 0 {
        throw DecodingError.dataCorruptedError(
          forKey: .number, in: container, debugDescription: "a negative number")
      }
      life = Life(try container.decode(String.self, forKey: .tag))
    }
  }

  /// The halves are kept apart and moved into the joined array: every element decoded is in
  /// the array once, in order, and is freed once, whether the decode succeeded or a half
  /// failed after decoding some.
  @Test(arguments: [nil, 30, 170])
  func everyElementDecodedLivesOnceAndIsFreed(failingAt failure: Int?) throws {
    for consuming in [false, true] {
      let tag = "lives-\(failure ?? -1)-\(consuming)"
      let json = JSON.array(
        (0..<200).map { i in
          ["number": .integer(i == failure ? -1 : Int64(i)), "tag": .string(tag)]
        })
      try ParallelDecoding.$threshold.withValue(64) {
        let decode = { () throws(JSONDecodingError) -> [Counted] in
          consuming
            ? try JSONValueDecoder().decode(ParallelDecodedArray<Counted>.self, consuming: json)
              .elements
            : try JSONValueDecoder().decode(ParallelDecodedArray<Counted>.self, from: json)
              .elements
        }
        if let failure {
          let error = #expect(throws: JSONDecodingError.self) { try decode() }
          #expect(error?.pointer == "/\(failure)/number")
        } else {
          let decoded = try decode()
          #expect(decoded.map(\.number) == Array(0..<200))
          #expect(Self.lives.count(tag) == 200)
        }
      }
      #expect(Self.lives.count(tag) == 0)
    }
  }
}

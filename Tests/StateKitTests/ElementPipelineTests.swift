import Dispatch
import JSON
import Testing

@testable import StateKit

/// A left-out array of many elements is written by two threads (`ElementPipeline`): the bytes,
/// and what an element that fails to encode leaves written, must be those of the one-thread
/// writer (`twoThreadsFrom: Int.max`), and the array must be the state's alone again after.
@StateActor
@Suite struct ElementPipelineTests {
  struct Book: Encodable, Equatable, Identifiable, Sendable {
    var id: Int
    var title: String
    var role = Role.plain

    enum Role: Equatable, Sendable {
      case plain
      /// Its `encode(to:)` throws: a feature's encoding that fails.
      case fails
      /// Says the worker has begun its first batch, then encodes.
      case startsTheWorker(Rendezvous)
      /// Waits until the worker has begun, then throws: the state's thread fails while the
      /// worker holds the array.
      case failsOnceTheWorkerRuns(Rendezvous)
    }

    enum CodingKeys: String, CodingKey {
      case id, title
    }

    func encode(to encoder: any Encoder) throws {
      switch role {
      case .plain: break
      case .fails: throw BookError.unencodable(id)
      case .startsTheWorker(let rendezvous): rendezvous.workerBegan.signal()
      case .failsOnceTheWorkerRuns(let rendezvous):
        // Bounded so that a worker the thread pool never starts fails the test, not hangs it.
        let began = rendezvous.workerBegan.wait(timeout: .now() + .seconds(30)) == .success
        throw began ? BookError.unencodable(id) : BookError.workerNeverBegan
      }
      var container = encoder.container(keyedBy: CodingKeys.self)
      try container.encode(id, forKey: .id)
      try container.encode(title, forKey: .title)
    }
  }

  final class Rendezvous: Equatable, Sendable {
    let workerBegan = DispatchSemaphore(value: 0)

    static func == (left: Rendezvous, right: Rendezvous) -> Bool { left === right }
  }

  enum BookError: Error, Equatable {
    case unencodable(Int)
    case workerNeverBegan
  }

  /// A view whose large array is not at the top: `/shelf/books`.
  struct NestedView: Encodable, Equatable {
    struct Shelf: Encodable, Equatable {
      var name: String
      var books: IdentifiedArray<Book>
      var total: Int
    }
    var title: String
    var shelf: Shelf
    var tail: [Int]
  }

  private func books(_ count: Int, failingAt failing: Int? = nil) -> IdentifiedArray<Book> {
    IdentifiedArray(
      (0..<count).map {
        Book(id: $0, title: "book \($0 % 97) \"q\"", role: $0 == failing ? .fails : .plain)
      })
  }

  private func view(_ books: IdentifiedArray<Book>) -> NestedView {
    NestedView(
      title: "t", shelf: NestedView.Shelf(name: "s", books: books, total: books.count),
      tail: [1, 2])
  }

  /// The text written and the error thrown, if any.
  private func written(
    _ view: NestedView, by publisher: ViewPublisher<NestedView>, batch: Int = 1_024,
    twoThreadsFrom: Int
  ) -> (text: [UInt8], error: BookError?) {
    var writer = JSONWriter()
    var thrown: BookError?
    do {
      try publisher.write(view, to: &writer, batch: batch, twoThreadsFrom: twoThreadsFrom)
    } catch {
      thrown = error as? BookError ?? .unencodable(-1)
    }
    return (writer.withUnsafeBytes { Array($0) }, thrown)
  }

  @Test func aNestedArrayIsWrittenAsOneThreadWritesIt() throws {
    for (count, batch) in [(20_000, 1_024), (9_000, 1_024), (1_000, 7), (3, 1), (0, 4)] {
      let view = view(books(count))
      let publisher = ViewPublisher(view, elisionThreshold: 0)
      #expect(publisher.leftOutElements() == count)
      let one = written(view, by: publisher, batch: batch, twoThreadsFrom: .max)
      let two = written(view, by: publisher, batch: batch, twoThreadsFrom: 0)
      #expect(one.error == nil && two.error == nil)
      #expect(two.text == one.text, "\(count) elements, \(batch) a batch")
      #expect(try JSON(parsing: two.text) == JSONValueEncoder().encode(view))
    }
  }

  @Test func aFailingElementFailsTheWriteAsOnOneThread() {
    // Batch 14 is the state's thread's to write, 15 the worker's; 19 is the last one.
    for failing in [0, 15_000, 16_000, 19_999] {
      let view = view(books(20_000, failingAt: failing))
      let publisher = ViewPublisher(view, elisionThreshold: 1_000)
      let one = written(view, by: publisher, twoThreadsFrom: .max)
      let two = written(view, by: publisher, twoThreadsFrom: 0)
      #expect(one.error == .unencodable(failing))
      #expect(two.error == one.error)
      #expect(two.text == one.text, "failing at \(failing)")
    }
  }

  @Test func theWorkerLetsGoOfTheArray() throws {
    var books = books(20_000)
    let publisher = ViewPublisher(view(books), elisionThreshold: 1_000)
    do {
      let written = written(view(books), by: publisher, twoThreadsFrom: 0)
      #expect(written.error == nil && !written.text.isEmpty)
    }
    // An array whose storage another value still held would fork its lineage on this edit.
    let before = books.revision
    books.append(Book(id: -1, title: "new"))
    #expect(books.revision.lineage == before.lineage)
    #expect(books.revision.number == before.number + 1)
  }

  @Test func theWorkerLetsGoOfTheArrayWhenTheStateThreadFails() throws {
    // The state's thread fails on the first element while the worker is inside batch 1,
    // whose first element said it began: the write must not return before the worker let go.
    let rendezvous = Rendezvous()
    var books = IdentifiedArray(
      (0..<20_000).map { id in
        Book(
          id: id, title: "b",
          role: id == 0
            ? .failsOnceTheWorkerRuns(rendezvous)
            : id == 1_024 ? .startsTheWorker(rendezvous) : .plain)
      })
    let publisher = ViewPublisher(view(books), elisionThreshold: 1_000)
    do {
      let written = written(view(books), by: publisher, twoThreadsFrom: 0)
      #expect(written.error == .unencodable(0))
      #expect(written.text == Array("{\"title\":\"t\",\"shelf\":{\"name\":\"s\",\"books\":[".utf8))
    }
    let before = books.revision
    books.append(Book(id: -1, title: "new"))
    #expect(books.revision.lineage == before.lineage)
  }

  @Test func aStoresWholeViewIsTheOneThreadText() throws {
    let store = ArrayElision.$threshold.withValue(1_000) {
      Store(
        feature: Shelf(),
        state: Shelf.State(
          books: IdentifiedArray(
            (0..<20_000).map { Shelf.Book(id: "b\($0)", title: "B\($0 % 13)", copies: $0) })))
    }
    // What `state/get` and a `store/open`'s answer write.
    var writer = JSONWriter()
    try store.writePublished(to: &writer)
    var one = JSONWriter()
    try store.publisher.write(
      Shelf().view(of: store.state), to: &one, twoThreadsFrom: .max)
    let text = writer.withUnsafeBytes { Array($0) }
    #expect(text == one.withUnsafeBytes { Array($0) })
    #expect(try JSON(parsing: text) == JSONValueEncoder().encode(Shelf().view(of: store.state)))
  }
}

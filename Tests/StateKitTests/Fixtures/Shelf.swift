import StateKit

/// A feature whose view mixes everything the publisher walks: an `IdentifiedArray`, a plain
/// array, an optional, an enum with payloads, a nested struct, a derived value.
struct Shelf: Feature {
  struct Book: Codable, Equatable, Sendable, Identifiable {
    var id: String
    var title: String
    var copies: Int
    var tags: [String] = []
  }
  enum Mode: Codable, Equatable, Sendable {
    case browsing
    case editing(id: String, draft: String)
  }
  struct Stats: Codable, Equatable, Sendable {
    var total: Int
    var note: String?
  }
  struct State: Codable, Equatable, Sendable {
    var books: IdentifiedArray<Book> = []
    var log: [String] = []
    var selected: String?
    var mode = Mode.browsing
    var note: String?
  }
  struct View: Codable, Equatable, Sendable {
    var books: IdentifiedArray<Book>
    var log: [String]
    var selected: String?
    var mode: Mode
    var stats: Stats
  }
  enum Action: Codable, Equatable, Sendable {
    case add(id: String, title: String, at: Int?)
    case remove(id: String)
    case rename(id: String, title: String)
    case copies(id: String, delta: Int)
    case tag(id: String, tag: String)
    case select(id: String?)
    case edit(id: String?)
    case note(String?)
    case sort
    case clear
    case log(String)
    case batch(count: Int)
  }

  static let name = "shelf"

  var initialState: State { State() }

  func reduce(into state: inout State, action: Action) -> Effect<Action, Never> {
    switch action {
    case .add(let id, let title, let position):
      let book = Book(id: id, title: title, copies: 1)
      if let position { state.books.insert(book, at: position) } else { state.books.append(book) }
    case .remove(let id): state.books.remove(id: id)
    case .rename(let id, let title): state.books[id: id]?.title = title
    case .copies(let id, let delta): state.books.modify(id: id) { $0.copies += delta }
    case .tag(let id, let tag): state.books[id: id]?.tags.append(tag)
    case .select(let id): state.selected = id
    case .edit(let id):
      state.mode = id.map { .editing(id: $0, draft: state.books[id: $0]?.title ?? "") } ?? .browsing
    case .note(let note): state.note = note
    case .sort: state.books.sort { $0.title < $1.title }
    case .clear: state.books.removeAll()
    case .log(let line): state.log.append(line)
    case .batch(let count):
      // More changes in one action than the log keeps: the publisher must fall back.
      for index in 0..<count { state.books.append(Book(id: "b\(index)", title: "B", copies: 0)) }
    }
    return .none
  }

  func view(of state: State) -> View {
    View(
      books: state.books, log: state.log, selected: state.selected, mode: state.mode,
      stats: Stats(total: state.books.reduce(0) { $0 + $1.copies }, note: state.note))
  }
}

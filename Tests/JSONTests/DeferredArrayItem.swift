/// The element of the arrays the tests of arrays left as text decode (`DeferredArrays`): a
/// string, a number, a nested array and an optional member, as a state's rows have.
struct DeferredArrayItem: Decodable, Equatable, Sendable {
  var id: String
  var n: Int
  var tags: [String]
  var note: String?
}

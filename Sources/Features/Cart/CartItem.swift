/// A line of the cart. `price` is in cents, so totals are exact.
public struct CartItem: Codable, Equatable, Identifiable, Sendable {
  /// The product's id; adding it again raises `quantity`.
  public var id: String
  public var name: String
  /// Price of one piece, in cents.
  public var price: Int
  public var quantity: Int

  /// A line of `quantity` pieces.
  public init(id: String, name: String, price: Int, quantity: Int = 1) {
    self.id = id
    self.name = name
    self.price = price
    self.quantity = quantity
  }
}

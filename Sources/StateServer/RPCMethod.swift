import JSON
import StateKit

/// One method of the protocol, declared once: its name, its params type (decoded by the JSON
/// layer's own decoder, so a missing or mistyped member is a `-32602` whose pointer names it),
/// what it does, and how `rpc.discover` describes it. ``Connection/methods`` lists them all;
/// routing, the draining rule and the OpenRPC document read that list and nothing else.
///
/// ```swift
/// RPCMethod(
///   "state/get", StateParams.self, summary: "The published state of a store.",
///   params: [.init("store", .string, required: true), .init("path", .string)],
///   result: OpenRPC.stateResult, errors: [.unknownStore, .invalidParams]
/// ) { connection, params, _ throws(RPCError) in try connection.getState(params) }
/// ```
///
/// A class: routing hands the same method out once per request, and a reference is copied with
/// one retain where the struct's four members took four.
final class RPCMethod: Sendable {
  /// What a client writes in `method`.
  let name: String
  /// Whether it is served while the server drains; every other method answers `-32010` then.
  let servedWhileDraining: Bool
  /// The OpenRPC method object `rpc.discover` lists, made when asked for: every start-up paid
  /// for building all the methods' descriptions, a document few clients ever read
  /// (docs/architecture.md, "Nothing built at start that a later request can build").
  var openRPC: JSON { describe() }
  private let describe: @Sendable () -> JSON
  /// Decodes the params and runs the method; `id` is nil for a notification.
  let call:
    @StateActor @Sendable (Connection, _ params: consuming JSON?, _ id: JSON?) throws(RPCError)
      -> Connection.Outcome

  /// A method whose params decode as `Params`; the handler gets them decoded. `direct`, for a
  /// method on the hot path, reads the usual params without the `Codable` decoder; it returns
  /// nil for anything unusual, which the decoder then reads (and words the error of).
  init<Params: Decodable>(
    _ name: String, _ params: Params.Type, servedWhileDraining: Bool = false,
    summary: String,
    params parameters: @autoclosure @escaping @Sendable () -> [OpenRPC.Param] = [],
    result: @autoclosure @escaping @Sendable () -> JSON = OpenRPC.anyObject,
    errors: @autoclosure @escaping @Sendable () -> [OpenRPC.ErrorEntry] = [],
    direct: (@Sendable (JSONObject) -> Params?)? = nil,
    handler:
      @escaping @StateActor @Sendable (Connection, consuming Params, _ id: JSON?) throws(RPCError)
      -> Connection.Outcome
  ) {
    self.name = name
    self.servedWhileDraining = servedWhileDraining
    self.describe = {
      OpenRPC.method(name, summary, parameters(), result: result(), errors: errors())
    }
    self.call = { connection, raw, id throws(RPCError) in
      if let direct, case .object(let object)? = raw, let params = direct(object) {
        return try handler(connection, params, id)
      }
      // The raw params are let go once decoded: a `store/open`'s state is then held by the
      // decoded params alone, which the handler consumes.
      let decoded = try Self.decode(Params.self, from: consume raw)
      return try handler(connection, consume decoded, id)
    }
  }

  /// Params given as an array are refused (every method takes named members); absent or null
  /// params decode as an empty object.
  static func decode<Params: Decodable>(_ type: Params.Type, from raw: JSON?) throws(RPCError)
    -> Params
  {
    let object: JSON
    switch raw {
    case nil, .null?: object = .object(JSONObject())
    case .object?: object = raw ?? .null
    case let other?:
      throw .invalidParams(
        pointer: "",
        reason: "expected the params as an object of named members, got \(other.kindDescription)")
    }
    do {
      return try JSONValueDecoder().decode(Params.self, from: object)
    } catch {
      throw .invalidParams(pointer: error.pointer, reason: error.reason)
    }
  }
}

import CPosix
import JSON

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A `store/open` of a large state: its large arrays are left as text (`DeferredArrays`), each
/// element parsed and decoded by the store's decode on two threads, with no tree of them built.
extension LineFramer {
  /// `line` as a `store/open` whose large arrays under `/params/state` are left as text, kept
  /// by `keeper` (which then takes the read buffer); or the line parsed whole when it left
  /// none. Nil for any other line, and for one whose text does not parse as it stands: the
  /// caller parses it whole, which says why.
  static func openLeavingText(_ line: UnsafeRawBufferPointer, keeper: ReadBufferKeeper)
    -> InboundLine?
  {
    guard let base = line.baseAddress else { return nil }
    // Only a line naming the method is tried: any other keeps the parse that gives its bytes
    // back as it goes. (An escaped `\/` in the name is missed, and parsed whole.)
    let method = "\"store/open\""
    let named = method.utf8.withContiguousStorageIfAvailable {
      cposix_contains(base, line.count, $0.baseAddress, $0.count) != 0
    }
    guard named == true,
      let (value, arrays) = JSON.parsingDeferringArrays(line, under: ["params", "state"])
    else { return nil }
    guard !arrays.isEmpty else { return RequestEnvelope.line(parsed: value) }
    guard case .request(let request) = RequestEnvelope.line(parsed: value),
      request.method == "store/open"
    else { return nil }
    keeper.isWanted = true
    return .openFromText(request, DeferredArrays(bytes: line, arrays: arrays, keeper: keeper))
  }

  /// A line parsed whole, as a line of its length is when it leaves nothing as text (but its
  /// bytes kept: they are another's).
  static func parsedWhole(_ line: UnsafeRawBufferPointer) -> InboundLine {
    do {
      return RequestEnvelope.line(parsed: try JSON(parsing: line))
    } catch {
      return .malformed(error)
    }
  }
}

/// The read buffer that holds the text of a `store/open`'s arrays left as text, taken from the
/// framer once the read's lines are parsed (``LineFramer/handOver(to:)``), so that no copy of a
/// long line is made; freed when the open is done with it.
///
/// Safety of `@unchecked Sendable`: both variables are set on the framer's thread before the
/// lines that hold this are handed on, and never again; after that it is only freed.
final class ReadBufferKeeper: @unchecked Sendable {
  var isWanted = false
  var buffer: ReadBuffer?
}

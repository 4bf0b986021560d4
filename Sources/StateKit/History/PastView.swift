import JSON

/// A view held apart from its store, as the store's publisher holds its own: the JSON of
/// everything but a large array's elements, which are encoded from the view when asked
/// (`ArrayElision`). What `Store.pastView(at:)` gives for a version history holds.
@StateActor
public protocol HeldView {
  /// The value at `path` (nil: none there); inside a left-out array only the element on the
  /// path is encoded.
  func value(at path: JSONPointer) -> JSON?
  /// The whole view as text, a large array's elements a batch at a time.
  func write(to writer: inout JSONWriter) throws
}

/// A view and the publisher that left its large arrays out.
struct PastView<View: Encodable & Equatable>: HeldView {
  let view: View
  let publisher: ViewPublisher<View>

  /// Leaving out what a publisher with `elisionThreshold` leaves out.
  init(_ view: View, elisionThreshold: Int) {
    self.view = view
    publisher = ViewPublisher(view, elisionThreshold: elisionThreshold)
  }

  func value(at path: JSONPointer) -> JSON? { publisher.value(at: path, in: view) }

  func write(to writer: inout JSONWriter) throws { try publisher.write(view, to: &writer) }
}

extension Store {
  /// The published view at `version`, for a store whose view leaves a large array's elements
  /// to the state; nil for any other (`published(at:)` is then the cheaper way).
  ///
  /// `published(at:)` takes the view now back through the later entries' reversals, which
  /// needs the whole view as a JSON tree first: for 1,000,000 notes, a tree of every element
  /// next to the state. Here the state as it was at `version` is reduced again from the
  /// checkpoint (as a rewind does; it shares the checkpoint's storage but for what those
  /// actions touch), and its view is held as the store's publisher holds the view now.
  public func pastView(at version: UInt64) throws(HistoryError) -> (any HeldView)? {
    guard publisher.leftOutElements() > 0 else { return nil }
    return PastView(
      feature.view(of: try state(asPublishedAt: version)),
      elisionThreshold: publisher.elisionThreshold)
  }
}

import JSON

/// Keeps a store's published view as JSON and turns each new view into the patch from it.
struct ViewPublisher<View: Encodable & Equatable> {
  private(set) var json: JSON
  private var lastView: View?

  init(_ view: View) {
    do {
      json = try JSONValueEncoder().encode(view)
    } catch {
      report("a view of type \(View.self) does not encode: \(error)")
      json = .null
    }
    lastView = view
  }

  /// Makes `view` the published one; returns the RFC 6902 operations from the previous one.
  mutating func update(to view: View) -> [JSON] {
    if let lastView, lastView == view { return [] }
    let new: JSON
    do {
      new = try JSONValueEncoder().encode(view)
    } catch {
      report("a view of type \(View.self) does not encode: \(error)")
      return []
    }
    let patch = JSONPatch.diff(from: json, to: new)
    json = new
    lastView = view
    return patch.json.arrayValue ?? []
  }
}

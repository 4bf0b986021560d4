/// One level of ``JSONTextEncoder``'s stream: a value being encoded (the `Encoder` its
/// `encode(to:)` is given) or a nested container, with its text open from its bracket on.
///
/// A frame keeps its last child and encodes the next member or element with it once no
/// container of it survived, as `ValueEncoder` does: an array of 100,000 structs uses one
/// child frame, not 100,000. Containers carry the frame's `generation` of when they were made:
/// a frame's text that was closed (and maybe reopened for the next sibling) has a new one, so
/// a container kept past its frame is caught, not written through.
final class TextFrame: Encoder {
  enum State { case closed, empty, value, object, array }

  let session: TextEncoding
  /// Unowned: a parent holds its child. Read for coding paths and when nested containers close.
  private unowned let parent: TextFrame?
  /// The parent's address, which closing this frame makes the top (read through `parent`, it
  /// was a strong retain and a release).
  private let parentAddress: UnsafeMutableRawPointer?
  /// The nesting level of this frame's value, as the writer counts it (the root is 0).
  let depth: Int
  /// Whether a member or element of this frame would nest past ``JSON/maximumDepth``.
  private let childTooDeep: Bool
  // Unchecked exclusivity, as in `ValueEncoder`: a frame is used by one thread inside one
  // `encode` call, and nothing here hands out an `inout` reference to these properties.
  @exclusivity(unchecked) private var key: (any CodingKey)?
  @exclusivity(unchecked) private(set) var state = State.closed
  /// A nested container's frame (closed when its parent writes on), not a value's.
  @exclusivity(unchecked) private var isNested = false
  @exclusivity(unchecked) private(set) var generation = 0
  /// Members or elements written.
  @exclusivity(unchecked) private(set) var count = 0
  /// The keys of the object written last here, in order, and their text (`"key":`, ending at
  /// `templateEnds`): the next object, of the same type mostly, writes each key that matches
  /// by copying its text, with no escaping, and needs no check that it is new (the template's
  /// keys are distinct, and it matches a prefix of them). From its first key that differs, an
  /// object leaves the template: the template is cut there and goes on with this object's own
  /// keys, each checked against the ones before it (past a few of them, through `keySet`).
  @exclusivity(unchecked) private var templateKeys: [String] = []
  @exclusivity(unchecked) private var templateText: [UInt8] = []
  @exclusivity(unchecked) private var templateEnds: [Int] = []
  /// Whether the object being written followed the template so far.
  @exclusivity(unchecked) private var onTemplate = true
  /// The keys of the object being written, once it has more than a few off the template.
  @exclusivity(unchecked) private var keySet: Set<String> = []
  @exclusivity(unchecked) private var child: TextFrame?

  init(session: TextEncoding, parent: TextFrame?) {
    self.session = session
    self.parent = parent
    parentAddress = parent.map { Unmanaged.passUnretained($0).toOpaque() }
    depth = parent.map { $0.depth + 1 } ?? 0
    childTooDeep = depth + 1 >= JSON.maximumDepth
  }

  var codingPath: [any CodingKey] {
    var path: [any CodingKey] = []
    var frame: TextFrame? = self
    while let current = frame {
      if let key = current.key { path.append(key) }
      frame = current.parent
    }
    return path.reversed()
  }

  var userInfo: [CodingUserInfoKey: Any] { session.userInfo }

  private var address: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

  // MARK: Opening and closing

  /// Starts this frame's value (its text not begun) or nested container (its bracket written
  /// by the caller) as the innermost open frame.
  func open(key: (any CodingKey)?, nested: Bool) {
    self.key = key
    isNested = nested
    state = .empty
    generation &+= 1
    count = 0
    onTemplate = true
    if !keySet.isEmpty { keySet.removeAll() }
    session.top = address
  }

  /// The frame for the next member or element: the last one, when nothing else holds it.
  private func nextChild() -> TextFrame {
    if isKnownUniquelyReferenced(&child), let child { return child }
    let made = TextFrame(session: session, parent: self)
    child = made
    return made
  }

  /// Writes the end of this frame's text (a value that encoded nothing is `{}`, as in the
  /// tree) and makes its parent the innermost open frame.
  private func close() {
    writeEnd()
    state = .closed
    generation &+= 1
    session.top = parentAddress
  }

  /// The end of what this frame's value wrote: a closing bracket, `{}` for a value that
  /// encoded nothing (as in the tree), nothing for a single value.
  private func writeEnd() {
    let writer = session.writer
    switch state {
    case .closed, .value: break
    case .empty: writer.pointee.append("{}")
    case .object: writer.pointee.append(UInt8(ascii: "}"))
    case .array: writer.pointee.append(UInt8(ascii: "]"))
    }
  }

  /// Ends this frame's value once its `encode(to:)` returned: nested containers it left open
  /// are closed, then its own text.
  func finish() throws {
    guard enter(nil) else { throw session.needTree() }
    close()
  }

  /// Makes this frame the innermost open one, as a write to it requires: nested containers
  /// opened above it are closed (a parent writing its next member means its nested container
  /// is done, as synthesized code does). False, with the value left to the tree path, when
  /// that cannot be followed: the frame (or the container, of `generation`) is no longer
  /// open, or a value is still being encoded above it.
  @inline(__always)
  func enter(_ generation: Int?) -> Bool {
    if session.top == address, generation == nil || generation == self.generation { return true }
    return enterSlowly(generation)
  }

  @inline(never)
  private func enterSlowly(_ generation: Int?) -> Bool {
    guard !session.broken, state != .closed, generation == nil || generation == self.generation
    else {
      _ = session.needTree()
      return false
    }
    while let top = session.topFrame, top !== self {
      guard top.isNested else {
        _ = session.needTree()
        return false
      }
      top.close()
    }
    return true
  }

  // MARK: Members and elements

  /// Writes what comes before a member's value: a comma after the first, the key, a colon.
  /// False (left to the tree path) when the container is stale, the key was written before
  /// (the tree keeps its first position and its last value), or the value would nest too deep.
  func beginMember(_ key: String, _ generation: Int) -> Bool {
    guard enter(generation), !childTooDeep else {
      _ = session.needTree()
      return false
    }
    let position = count
    let writer = session.writer
    if position > 0 { writer.pointee.append(UInt8(ascii: ",")) }
    if onTemplate && position < templateKeys.count && templateKeys[position] == key {
      let from = position == 0 ? 0 : templateEnds[position - 1]
      let to = templateEnds[position]
      templateText.withUnsafeBufferPointer { text in
        writer.pointee.reserve(to - from)
        writer.pointee.put(UnsafeBufferPointer(rebasing: text[from..<to]))
      }
    } else {
      guard isNew(key, at: position) else {
        _ = session.needTree()
        return false
      }
      let from = writer.pointee.count
      let handedOn = writer.pointee.handedOn
      writer.pointee.write(string: key)
      writer.pointee.append(UInt8(ascii: ":"))
      templateKeys.append(key)
      if writer.pointee.handedOn == handedOn {
        templateText.append(
          contentsOf: UnsafeBufferPointer(
            start: writer.pointee.start + from, count: writer.pointee.count - from))
      } else {
        // Part of the key's text was handed on meanwhile: write it again where it is kept.
        var text = JSONWriter(capacity: key.utf8.count + 3)
        text.write(string: key)
        text.append(UInt8(ascii: ":"))
        text.withUnsafeBytes { templateText.append(contentsOf: $0) }
      }
      templateEnds.append(templateText.count)
    }
    count &+= 1
    return true
  }

  /// Whether `key` is not among the object's first `position` keys (which, off the template,
  /// are the template's); leaves the template when the object was on it.
  private func isNew(_ key: String, at position: Int) -> Bool {
    if onTemplate {
      onTemplate = false
      if position < templateKeys.count {
        templateKeys.removeSubrange(position...)
        templateEnds.removeSubrange(position...)
        templateText.removeSubrange((position == 0 ? 0 : templateEnds[position - 1])...)
      }
    }
    if position < JSONObject.linearLimit {
      for earlier in templateKeys where earlier == key { return false }
      return true
    }
    if keySet.isEmpty { keySet = Set(templateKeys) }
    return keySet.insert(key).inserted
  }

  /// `beginMember` for an array's next element.
  func beginElement(_ generation: Int) -> Bool {
    guard enter(generation), !childTooDeep else {
      _ = session.needTree()
      return false
    }
    if count > 0 { session.writer.pointee.append(UInt8(ascii: ",")) }
    count &+= 1
    return true
  }

  /// Writes `value` as the member or element just begun (its key `key`).
  func encodeChild<T: Encodable>(_ value: T, key: any CodingKey) throws {
    if try session.writeSpecial(value, depth: depth + 1) { return }
    let child = nextChild()
    child.open(key: key, nested: false)
    do {
      try value.encode(to: child)
      try child.finish()
    } catch {
      session.fail()
      throw error
    }
  }

  /// Opens a nested container as the member or element just begun; a frame that refuses
  /// every write when it could not be begun.
  func openNested(key: any CodingKey, object: Bool, begun: Bool) -> TextFrame {
    guard begun else { return TextFrame(session: session, parent: self) }
    let child = nextChild()
    child.open(key: key, nested: true)
    session.writer.pointee.append(object ? UInt8(ascii: "{") : UInt8(ascii: "["))
    child.state = object ? .object : .array
    return child
  }

  /// A super encoder: its value would be written after the container's next members, which a
  /// stream cannot do, so the tree path writes the value.
  func refuseSuperEncoder() -> any Encoder {
    _ = session.needTree()
    return TextFrame(session: session, parent: self)
  }

  // MARK: Single values

  /// Whether a single value may be written here now (nothing was, and no container); false
  /// for a container the tree path would not see, while it writes the value.
  func beginSingle(_ generation: Int) throws -> Bool {
    guard enter(generation), state == .empty else {
      _ = session.needTree()
      return try refused()
    }
    return true
  }

  /// What a write the stream refused does: while the tree path writes the value, the write
  /// went to a container of this encoder kept from before (the tree's own containers are
  /// its own), which the tree would not see either, so it is ignored; otherwise it unwinds
  /// the value for the tree path.
  func refused() throws -> Bool {
    guard session.byTree else { throw TextEncodingFallback() }
    return false
  }

  /// The single value was written.
  func endSingle() { state = .value }

  /// Encodes `value` as this frame's own value (a single-value container's `encode(_:)`): its
  /// containers are this frame's, as in the tree; then its text is ended and the containers
  /// handed out so far go stale.
  func encodeInner<T: Encodable>(_ value: T) throws {
    if try session.writeSpecial(value, depth: depth) {
      state = .value
      return
    }
    do {
      try value.encode(to: self)
      guard enter(nil) else { throw session.needTree() }
    } catch {
      session.fail()
      throw error
    }
    writeEnd()
    state = .value
    generation &+= 1
  }

  /// `JSON`'s own `encode(to:)` given this encoder: the value as it is.
  func encodeRaw(_ json: JSON) throws {
    guard enter(nil), state == .empty else {
      _ = session.needTree()
      _ = try refused()
      return
    }
    try session.write(json, depth: depth)
    state = .value
  }

  // MARK: Encoder

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    begin(.object)
    return KeyedEncodingContainer(TextKeyedContainer<Key>(frame: self, generation: generation))
  }

  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    begin(.array)
    return TextUnkeyedContainer(frame: self, generation: generation)
  }

  func singleValueContainer() -> any SingleValueEncodingContainer {
    TextSingleValueContainer(frame: self, generation: generation)
  }

  /// Starts a container of `kind` here, unless one is already open (a type may ask twice);
  /// any other change of mind is left to the tree path.
  private func begin(_ kind: State) {
    guard enter(nil) else { return }
    if state == kind { return }
    guard state == .empty else {
      _ = session.needTree()
      return
    }
    session.writer.pointee.append(kind == .object ? UInt8(ascii: "{") : UInt8(ascii: "["))
    state = kind
  }
}

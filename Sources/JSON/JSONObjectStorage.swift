// The members buffer behind a `JSONObject`: one heap allocation holding a small header and the
// members themselves, tail-allocated (`ManagedBuffer`). Parsing or encoding an object thus
// costs one allocation rather than three (a box plus a keys array plus a values array), and a
// member's key and value sit side by side for the writer and the differ.
//
// The buffer is only ever written through `JSONObject`'s copy-on-write checks; the functions
// here assume their caller made it unique first.

/// What a members buffer knows besides its members.
///
/// The two counts are 32 bits each, so the header is two words and a buffer of seven members
/// (a note) fits the allocator's 320-byte size rather than its 336 (16 MB of a million parsed
/// notes); an object of more than 4,294,967,295 members could not be parsed into memory anyway.
struct JSONObjectHeader {
  private var storedCount: UInt32
  private var storedCapacity: UInt32
  /// Key to position; only built past `JSONObject.linearLimit` keys, where hashing beats a
  /// scan. `nil` below it.
  var index: [String: Int]?

  init(count: Int, capacity: Int, index: [String: Int]?) {
    storedCount = UInt32(count)
    storedCapacity = UInt32(capacity)
    self.index = index
  }

  /// How many members are initialized, from the start of the elements.
  var count: Int {
    @inline(__always) get { Int(storedCount) }
    @inline(__always) set { storedCount = UInt32(truncatingIfNeeded: newValue) }
  }

  /// How many members fit. Kept here: `ManagedBuffer.capacity` asks the allocator on Linux.
  var capacity: Int {
    @inline(__always) get { Int(storedCapacity) }
    @inline(__always) set { storedCapacity = UInt32(truncatingIfNeeded: newValue) }
  }
}

/// The members of one object, in insertion order.
///
/// Not `Sendable` itself (`ManagedBuffer` forbids it); `JSONObject`, which is the only holder,
/// is, with the copy-on-write argument written there.
final class JSONObjectStorage: ManagedBuffer<JSONObjectHeader, JSONObject.Member> {
  /// The buffer every empty `JSONObject()` starts from, so making one allocates nothing.
  ///
  /// `nonisolated(unsafe)` is sound because this buffer is never written: it has no members
  /// and no room, every write goes through `JSONObject.makeUnique`, and the static's own
  /// reference means no object ever finds it uniquely referenced, so writers copy it first.
  /// (`reindex()` skips the write when nothing changes, so it leaves it alone too.)
  nonisolated(unsafe) static let empty = JSONObjectStorage.make(capacity: 0)

  /// A new, empty buffer with room for `capacity` members.
  static func make(capacity: Int) -> JSONObjectStorage {
    let buffer = create(minimumCapacity: capacity) { _ in
      JSONObjectHeader(count: 0, capacity: capacity, index: nil)
    }
    // `create` on this class makes an instance of this class; the cast only restates that.
    return unsafeDowncast(buffer, to: JSONObjectStorage.self)
  }

  deinit {
    // The header is destroyed by `ManagedBuffer`; the members are ours to destroy. One by one,
    // moved out: `deinitialize(count:)` goes through the runtime's generic `swift_arrayDestroy`
    // and tuple destroy (value witnesses), where a move destroys the concrete member type with
    // specialized code.
    withUnsafeMutablePointers { header, members in
      for position in 0..<header.pointee.count { _ = (members + position).move() }
    }
  }

  /// The header, addressed directly. `ManagedBuffer.header` is a class stored property, so
  /// every access through it pays a dynamic exclusivity check (`swift_beginAccess`), on every
  /// member the encoder writes. The pointer stays valid while `self` is alive, which it
  /// is for the whole of every method here that uses it.
  @inline(__always)
  private var head: UnsafeMutablePointer<JSONObjectHeader> {
    withUnsafeMutablePointerToHeader { $0 }
  }

  var count: Int { head.pointee.count }
  var memberCapacity: Int { head.pointee.capacity }
  var hasIndex: Bool { head.pointee.index != nil }

  /// Runs `body` on the initialized members; the pointer is only valid inside `body`.
  @inline(__always)
  func withMembers<Result, Failure: Error>(
    _ body: (UnsafeBufferPointer<JSONObject.Member>) throws(Failure) -> Result
  ) throws(Failure) -> Result {
    try withUnsafeMutablePointers { (header, members) throws(Failure) -> Result in
      try body(UnsafeBufferPointer(start: members, count: header.pointee.count))
    }
  }

  /// Runs `body` on the initialized members, for writing; only for a unique buffer.
  @inline(__always)
  func withMutableMembers<Result>(
    _ body: (UnsafeMutableBufferPointer<JSONObject.Member>) -> Result
  ) -> Result {
    withUnsafeMutablePointers { header, members in
      body(UnsafeMutableBufferPointer(start: members, count: header.pointee.count))
    }
  }

  /// The position of `key`, by hash when the index exists and by a scan otherwise.
  ///
  /// The index and the keys are read where they lie: binding the optional index copied it, and
  /// `firstIndex(where:)` copied each member out (key and value) to compare its key.
  @inline(__always)
  func position(of key: String) -> Int? {
    if head.pointee.index != nil { return head.pointee.index?[key] }
    return withMembers { members in
      for position in members.indices where members[position].key == key { return position }
      return nil
    }
  }

  /// A copy of the members (and index) in a new buffer of `capacity` (at least `count`).
  func copied(capacity: Int) -> JSONObjectStorage {
    let copy = JSONObjectStorage.make(capacity: capacity)
    withUnsafeMutablePointers { header, members in
      copy.withUnsafeMutablePointers { copyHeader, copyMembers in
        copyMembers.initialize(from: members, count: header.pointee.count)
        copyHeader.pointee.count = header.pointee.count
        copyHeader.pointee.index = header.pointee.index
      }
    }
    return copy
  }

  /// The members moved into a new buffer of `capacity`; this buffer is left empty (its
  /// deinit then destroys nothing). Only for a unique buffer.
  func moved(capacity: Int) -> JSONObjectStorage {
    let moved = JSONObjectStorage.make(capacity: capacity)
    withUnsafeMutablePointers { header, members in
      moved.withUnsafeMutablePointers { movedHeader, movedMembers in
        movedMembers.moveInitialize(from: members, count: header.pointee.count)
        movedHeader.pointee.count = header.pointee.count
        movedHeader.pointee.index = header.pointee.index
        header.pointee.count = 0
        header.pointee.index = nil
      }
    }
    return moved
  }

  /// Appends a member; there must be room. Leaves the index alone (the caller updates it).
  @inline(__always)
  func append(_ key: consuming String, _ value: consuming JSON) {
    withUnsafeMutablePointers { header, members in
      (members + header.pointee.count).initialize(to: (key, value))
      header.pointee.count &+= 1
    }
  }

  /// Removes and returns the member at `position`, shifting the later ones down. Leaves the
  /// index alone (the caller rebuilds it).
  func remove(at position: Int) -> JSONObject.Member {
    withUnsafeMutablePointers { header, members in
      let removed = (members + position).move()
      let after = header.pointee.count - position - 1
      (members + position).moveInitialize(from: members + position + 1, count: after)
      header.pointee.count -= 1
      return removed
    }
  }

  /// Builds the key index when there are more members than a scan handles well, drops it
  /// otherwise. Keys must be distinct.
  func reindex() {
    guard count > JSONObject.linearLimit else {
      if head.pointee.index != nil { head.pointee.index = nil }
      return
    }
    head.pointee.index = withMembers { members in
      var built = [String: Int](minimumCapacity: members.count)
      for position in members.indices { built[members[position].key] = position }
      return built
    }
  }

  /// Records that the member appended last is at `position`, building the index when the
  /// object just outgrew a scan.
  func indexAppended(_ key: String, at position: Int) {
    if head.pointee.index != nil {
      head.pointee.index?[key] = position
    } else if count > JSONObject.linearLimit {
      reindex()
    }
  }

  /// Whether the members' keys hold a repeat; builds the index on the way when it is wanted.
  /// Used on encoder output, whose keys are distinct unless a hand-written `encode(to:)`
  /// encoded one twice.
  func indexReportingDuplicates() -> Bool {
    if count <= JSONObject.linearLimit {
      head.pointee.index = nil
      return withMembers { members in
        for position in members.indices.dropFirst() {
          let key = members[position].key
          for earlier in 0..<position where members[earlier].key == key { return true }
        }
        return false
      }
    }
    let built: [String: Int]? = withMembers { members in
      var built = [String: Int](minimumCapacity: members.count)
      for position in members.indices
      where built.updateValue(position, forKey: members[position].key) != nil {
        return nil
      }
      return built
    }
    guard let built else { return true }
    head.pointee.index = built
    return false
  }
}

struct ObjectDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let decoder: ValueDecoder
  /// In a strict decode, the keys asked for (see ``KeyLedger``).
  let asked: KeyLedger.Entry?

  /// The decoder's object (`container(keyedBy:)` made this container only for one), read
  /// there rather than held here too: `KeyedDecodingContainer`'s box copies its container
  /// for every member decoded, a retain and a release per reference it holds.
  var object: JSONObject {
    guard case .object(let object) = decoder.value else { return JSONObject() }
    return object
  }

  init(decoder: ValueDecoder, asked: KeyLedger.Entry?) {
    self.decoder = decoder
    self.asked = asked
  }

  var codingPath: [any CodingKey] { decoder.codingPath }
  /// Synthesized enum decoding asks for this on every value, with one key: a plain loop,
  /// because the generic `compactMap` is not specialized across modules and runs through
  /// value witnesses.
  var allKeys: [Key] {
    asked?.askedForAll = true
    let object = self.object
    var keys: [Key] = []
    keys.reserveCapacity(object.count)
    for position in 0..<object.count {
      if let key = Key(stringValue: object.key(at: position)) { keys.append(key) }
    }
    return keys
  }

  func contains(_ key: Key) -> Bool {
    asked?.ask(key.stringValue)
    return object.position(of: key.stringValue) != nil
  }

  /// The member at `key`; a missing one is an error whose pointer names it.
  // `expected` is built only for the error: for a generic type it is a run-time cast and, for a
  // raw-value enum, the list of its cases, which a state of many elements paid per member.
  private func member(_ key: Key, expecting expected: @autoclosure () -> String) throws -> JSON {
    asked?.ask(key.stringValue)
    guard let value = lookUp(key.stringValue) else {
      throw decoder.failure(
        at: key, "required field '\(key.stringValue)' is missing; expected \(expected())")
    }
    return value
  }

  /// The member at `key`, or `nil` when it is missing or null (`decodeIfPresent`).
  private func present(_ key: Key) -> JSON? {
    asked?.ask(key.stringValue)
    guard let value = lookUp(key.stringValue), !value.isNull else { return nil }
    return value
  }

  func decodeNil(forKey key: Key) throws -> Bool {
    asked?.ask(key.stringValue)
    return lookUp(key.stringValue)?.isNull ?? true
  }

  /// The member named `name`.
  private func lookUp(_ name: String) -> JSON? { find(name)?.value }

  /// The position and the value of the member named `name`, tried first at the position after
  /// the member found last: a type usually reads its fields in the order they were written,
  /// and a scan from the start compared the name with every member before it. The object is
  /// read out of the decoder once: each read is a retain and a release (atomic), and reading
  /// it for each step of the lookup made them several per member.
  private func find(_ name: String) -> (position: Int, value: JSON)? {
    guard case .object(let object) = decoder.value else { return nil }
    let hint = decoder.nextMember
    let position: Int
    if hint < object.count, object.withMembers({ $0[hint].key == name }) {
      position = hint
    } else if let found = object.position(of: name) {
      position = found
    } else {
      return nil
    }
    decoder.nextMember = position + 1
    return (position, object.withMembers { $0[position].value })
  }

  // The value of the expected kind is returned here, and the decoder's shared check (which
  // says what is wrong) is called only for another: it takes the key as an optional
  // existential, whose making and destroying cost a member more than the rest of its check.
  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    let value = try member(key, expecting: "a boolean")
    if case .bool(let flag) = value { return flag }
    return try decoder.bool(value, at: key)
  }
  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    let value = try member(key, expecting: "a string")
    if case .string(let string) = value { return string }
    return try decoder.string(value, at: key)
  }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    try decoder.floatingPoint(type, member(key, expecting: "a number"), at: key)
  }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
    try decoder.floatingPoint(type, member(key, expecting: "a number"), at: key)
  }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }
  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    if decoder.consumes {
      let value = try taking(key, expecting: WireExpectation.of(T.self))
      if let deferred = decoder.deferredArray(standingFor: value, at: key) {
        return try decoder.decodeChild(type, deferred: deferred, key: key)
      }
      return try decoder.decodeChild(type, from: value, key: key)
    }
    return try decoder.decodeChild(
      type, from: member(key, expecting: WireExpectation.of(T.self)), key: key)
  }

  private func integer<I: FixedWidthInteger>(_ type: I.Type, _ key: Key) throws -> I {
    let value = try member(key, expecting: "an integer")
    if case .integer(let integer) = value, let exact = I(exactly: integer) { return exact }
    return try decoder.integer(type, value, at: key)
  }

  // One lookup per optional field instead of the default contains + decodeNil + decode.
  func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
    guard let value = present(key) else { return nil }
    if case .bool(let flag) = value { return flag }
    return try decoder.bool(value, at: key)
  }
  func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
    guard let value = present(key) else { return nil }
    if case .string(let string) = value { return string }
    return try decoder.string(value, at: key)
  }
  func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
    try present(key).map { try decoder.floatingPoint(type, $0, at: key) }
  }
  func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
    guard let value = present(key) else { return nil }
    if case .integer(let integer) = value, let exact = Int(exactly: integer) { return exact }
    return try decoder.integer(type, value, at: key)
  }
  func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
    guard let value = present(key) else { return nil }
    if case .integer(let integer) = value { return integer }
    return try decoder.integer(type, value, at: key)
  }
  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    if decoder.consumes {
      guard let value = try takingIfPresent(key) else { return nil }
      if let deferred = decoder.deferredArray(standingFor: value, at: key) {
        return try decoder.decodeChild(type, deferred: deferred, key: key)
      }
      return try decoder.decodeChild(type, from: value, key: key)
    }
    return try present(key).map { try decoder.decodeChild(type, from: $0, key: key) }
  }

  // MARK: A consuming decode

  /// ``member(_:expecting:)``, taken out of the object when it is an array or an object.
  private func taking(_ key: Key, expecting expected: @autoclosure () -> String) throws -> JSON {
    asked?.ask(key.stringValue)
    guard case (let position, var value)? = try takenMember(key) else {
      throw decoder.failure(
        at: key, "required field '\(key.stringValue)' is missing; expected \(expected())")
    }
    guard Self.isContainer(value) else { return value }
    // The copy found must not be a second holder of the member moved out next.
    value = .null
    return take(at: position)
  }

  /// ``present(_:)``, taken out of the object when it is an array or an object.
  private func takingIfPresent(_ key: Key) throws -> JSON? {
    asked?.ask(key.stringValue)
    guard case (let position, var value)? = try takenMember(key), !value.isNull else {
      return nil
    }
    guard Self.isContainer(value) else { return value }
    value = .null
    return take(at: position)
  }

  private static func isContainer(_ value: JSON) -> Bool {
    switch value {
    case .array, .object: return true
    default: return false
    }
  }

  /// The position and the value of the member `key` (nil when missing); an error when an
  /// earlier read took it out already.
  private func takenMember(_ key: Key) throws -> (position: Int, value: JSON)? {
    guard let found = find(key.stringValue) else { return nil }
    if decoder.isTaken(found.position) {
      throw decoder.failure(
        at: key, "the member was already read once (this decode consumes what it reads)")
    }
    return found
  }

  /// The member at `position`, an array or an object: moved out of the object, leaving `null`,
  /// when the object is held by its decoder alone (otherwise it is copied, as when borrowing).
  private func take(at position: Int) -> JSON {
    guard case .object(var members) = decoder.value else { return .null }
    decoder.value = .null
    defer { decoder.value = .object(members) }
    guard members.isUniquelyHeld() else { return members.value(at: position) }
    decoder.markTaken(position)
    return members.exchangeValue(.null, at: position)
  }

  func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key)
    throws -> KeyedDecodingContainer<NestedKey>
  {
    let value =
      try decoder.consumes
      ? taking(key, expecting: "an object") : member(key, expecting: "an object")
    return try ValueDecoder(value: parsed(value, at: key), parent: decoder, key: key)
      .container(keyedBy: type)
  }

  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    let value =
      try decoder.consumes
      ? taking(key, expecting: "an array") : member(key, expecting: "an array")
    return try ValueDecoder(value: parsed(value, at: key), parent: decoder, key: key)
      .unkeyedContainer()
  }

  func superDecoder() throws -> any Decoder {
    ValueDecoder(
      value: object[CodingPathKey.super.stringValue] ?? .null, parent: decoder,
      key: CodingPathKey.super)
  }

  func superDecoder(forKey key: Key) throws -> any Decoder {
    asked?.ask(key.stringValue)
    return ValueDecoder(
      value: try parsed(object[key.stringValue] ?? .null, at: key), parent: decoder, key: key)
  }

  /// `value`, the member `key`, or the array left as text it stands for, parsed into a tree
  /// (``DeferredArrays``): what a container or a decoder of its own reads.
  private func parsed(_ value: JSON, at key: Key) throws -> JSON {
    guard let deferred = decoder.deferredArray(standingFor: value, at: key) else { return value }
    return try decoder.tree(ofDeferred: deferred, at: key)
  }
}

struct ArrayDecodingContainer: UnkeyedDecodingContainer {
  private var elements: [JSON]
  let decoder: ValueDecoder
  private(set) var currentIndex = 0
  /// Whether each element is moved out as it is read, so it is freed once decoded (the
  /// elements were handed over: ``JSONValueDecoder/decode(_:consuming:)``).
  private let consumes: Bool

  init(elements: consuming [JSON], decoder: ValueDecoder, consumes: Bool = false) {
    self.elements = elements
    self.decoder = decoder
    self.consumes = consumes
  }

  var codingPath: [any CodingKey] { decoder.codingPath }
  var count: Int? { elements.count }
  var isAtEnd: Bool { currentIndex >= elements.count }

  private var key: CodingPathKey { CodingPathKey(intValue: currentIndex) }

  /// The next element (consumed); past the end is an error at the missing position.
  // `expected` is built only for the error: for a generic element it names the type, a string
  // interpolation that a state of many elements paid per element.
  private mutating func next(expecting expected: @autoclosure () -> String) throws -> (
    JSON, CodingPathKey
  ) {
    guard !isAtEnd else {
      throw decoder.failure(
        at: key, "expected \(expected()), found the end of the array (\(elements.count) elements)")
    }
    defer { currentIndex += 1 }
    guard consumes else { return (elements[currentIndex], key) }
    var element = JSON.null
    swap(&element, &elements[currentIndex])
    return (element, key)
  }

  mutating func decodeNil() throws -> Bool {
    guard !isAtEnd, elements[currentIndex].isNull else { return false }
    currentIndex += 1
    return true
  }

  mutating func decode(_ type: Bool.Type) throws -> Bool {
    let (value, key) = try next(expecting: "a boolean")
    return try decoder.bool(value, at: key)
  }
  mutating func decode(_ type: String.Type) throws -> String {
    let (value, key) = try next(expecting: "a string")
    return try decoder.string(value, at: key)
  }
  mutating func decode(_ type: Double.Type) throws -> Double { try floatingPoint(type) }
  mutating func decode(_ type: Float.Type) throws -> Float { try floatingPoint(type) }
  mutating func decode(_ type: Int.Type) throws -> Int { try integer(type) }
  mutating func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
  mutating func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
  mutating func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
  mutating func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
  mutating func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
  mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
  mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
  mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
  mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }
  mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
    let (value, key) = try next(expecting: "a value of type \(T.self)")
    return try decoder.decodeChild(type, from: value, key: key)
  }

  private mutating func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
    let (value, key) = try next(expecting: "an integer")
    return try decoder.integer(type, value, at: key)
  }

  private mutating func floatingPoint<F: BinaryFloatingPoint>(_ type: F.Type) throws -> F {
    let (value, key) = try next(expecting: "a number")
    return try decoder.floatingPoint(type, value, at: key)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
    -> KeyedDecodingContainer<NestedKey>
  {
    let (value, key) = try next(expecting: "an object")
    return try ValueDecoder(value: value, parent: decoder, key: key).container(keyedBy: type)
  }

  mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
    let (value, key) = try next(expecting: "an array")
    return try ValueDecoder(value: value, parent: decoder, key: key).unkeyedContainer()
  }

  mutating func superDecoder() throws -> any Decoder {
    let (value, key) = try next(expecting: "a value")
    return ValueDecoder(value: value, parent: decoder, key: key)
  }
}

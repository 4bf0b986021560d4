// Recording the reversal of edits that were not applied to the document being kept: a publisher
// that leaves a large array's elements to the typed state sends its clients operations inside
// that array without applying them to its own JSON, and records how to take them back from what
// the array's change log remembers (the element before each change).

extension JSONPatchReversal {
  /// Records that an element was inserted at `index` of the array at `array`: taking it back
  /// removes it.
  public mutating func recordInsertion(into array: JSONPointer, at index: Int) {
    entries.append(.arrayRemove(path: array.appending(index: index), index: index))
  }

  /// Records that `old` was removed from `index` of the array at `array`: taking it back
  /// inserts it again.
  public mutating func recordRemoval(from array: JSONPointer, at index: Int, of old: JSON) {
    entries.append(.arrayInsert(path: array.appending(index: index), index: index, value: old))
  }

  /// Records that the element at `index` of the array at `array`, which was `old`, changed:
  /// taking it back puts `old` there again.
  public mutating func recordReplacement(in array: JSONPointer, at index: Int, of old: JSON) {
    entries.append(.arraySet(path: array.appending(index: index), index: index, value: old))
  }

  /// Appends `other`'s entries: they take back edits made after this reversal's.
  public mutating func append(_ other: consuming JSONPatchReversal) {
    if !other.isComplete { isComplete = false }
    if entries.isEmpty {
      swap(&entries, &other.entries)
    } else {
      entries += other.entries
    }
  }

  /// Marks this reversal as unable to take its edits back (the value an edit replaced was not
  /// kept): `JSON.reverse(_:)` refuses it, and a history rebuilds that past another way.
  public mutating func markIncomplete() { isComplete = false }
}

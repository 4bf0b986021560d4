// Large arrays left as text (`DeferredArrays`): found by their brackets, parsed later.
extension JSONParser {
  /// Which arrays a parse leaves as text: members at least `minimumBytes` long whose place
  /// starts with `prefix` (a `store/open`'s `/params/state`).
  struct Deferral {
    var prefix: [String]
    var minimumBytes: Int
  }

  /// Leaves the array at the offset as text when `deferral` takes it: records it, moves past
  /// its `]`, and says so; otherwise changes nothing. Only an object's member is left so (a
  /// decode meets it through its object's keyed container).
  mutating func deferArray(_ deferral: Deferral) -> Bool {
    guard frames.last?.isObject == true else { return false }
    let tokens = pointer.tokens
    guard tokens.count > deferral.prefix.count, tokens.starts(with: deferral.prefix),
      let scan = JSONArrayScan.scan(bytes, arrayAt: offset, step: deferral.minimumBytes / 16),
      scan.close + 1 - offset >= deferral.minimumBytes
    else { return false }
    deferred.append(
      DeferredArrays.Array(
        tokens: Array(tokens.dropFirst(deferral.prefix.count)), open: offset, close: scan.close,
        count: scan.count, split: scan.split, levelsAbove: frames.count + 1))
    offset = scan.close + 1
    return true
  }
}

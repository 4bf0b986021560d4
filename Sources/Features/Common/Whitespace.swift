/// Which characters `trimmingCharacters(in:)` removes: the subset of Foundation's
/// `CharacterSet` the features trim by. The features link `FoundationEssentials`, not
/// Foundation, which has no `CharacterSet` trimming; the sets are the same scalars.
enum Whitespace {
  /// Space separators (Unicode category Zs), the tab, and the zero-width space (U+200B), which
  /// Foundation on Linux counts too (`WhitespaceTests` compares with it).
  case whitespaces
  /// Every scalar with the Unicode `White_Space` property (the above and the line breaks), and
  /// U+200B as above.
  case whitespacesAndNewlines

  func contains(_ scalar: Unicode.Scalar) -> Bool {
    switch self {
    case .whitespaces:
      scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
    case .whitespacesAndNewlines: scalar.properties.isWhitespace || scalar == "\u{200B}"
    }
  }
}

extension StringProtocol {
  /// The string without the leading and trailing scalars in `set`, as Foundation trims.
  func trimmingCharacters(in set: Whitespace) -> String {
    let scalars = unicodeScalars
    guard let first = scalars.firstIndex(where: { !set.contains($0) }),
      let last = scalars.lastIndex(where: { !set.contains($0) })
    else { return "" }
    var trimmed = String.UnicodeScalarView()
    trimmed.append(contentsOf: scalars[first...last])
    return String(trimmed)
  }
}

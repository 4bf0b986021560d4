import Foundation
import Testing

@testable import Features

/// The features trim without Foundation (`Whitespace`): the result must be Foundation's.
@Suite struct WhitespaceTests {
  static let samples = [
    "", " ", "  a b  ", "\t\n x \r\n", "\u{00A0}name\u{3000}", "\u{2028}x\u{0085}", "a\u{301}",
    " \u{301}b ", "\u{200B}x\u{200B}", "\n", "é  ", "\u{1680}ok\u{205F}", "\u{000B}\u{000C}v",
    "  \u{1F600}  ", "\r\n",
  ]

  @Test(arguments: samples)
  func trimsWhitespaceAndNewlinesAsFoundationDoes(text: String) {
    #expect(
      text.trimmingCharacters(in: Whitespace.whitespacesAndNewlines)
        == text.trimmingCharacters(in: CharacterSet.whitespacesAndNewlines))
  }

  @Test(arguments: samples)
  func trimsWhitespacesAsFoundationDoes(text: String) {
    #expect(
      text.trimmingCharacters(in: Whitespace.whitespaces)
        == text.trimmingCharacters(in: CharacterSet.whitespaces))
  }
}

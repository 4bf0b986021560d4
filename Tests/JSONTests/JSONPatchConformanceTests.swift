import Testing

@testable import JSON

private let suiteFolder = "json-patch-tests"

/// Every record of json-patch-tests (`tests.json`, and `spec_tests.json`: the examples of
/// RFC 6902 Appendix A), skipping only those marked `disabled`.
@Suite("json-patch-tests (RFC 6902 apply)", .enabled(if: TestData.shouldRun(suiteFolder)))
struct JSONPatchConformanceTests {
  /// Records each file must run (its records minus the disabled ones), per
  /// testdata/README.md: 95 − 3 and 17 − 1.
  @Test(arguments: [("tests.json", 92), ("spec_tests.json", 16)])
  func everyRecordPasses(file: String, expectedRuns: Int) throws {
    // The disabled "duplicate ops" records hold an object with two "op" members.
    let records = try JSON(
      parsing: TestData.bytes(suiteFolder, file), options: .allowDuplicateKeys)
    let list = try #require(records.arrayValue, "\(file) is not an array of records")
    var ran = 0
    for (index, record) in list.enumerated() where record["disabled"] != true {
      let label = "\(file) record \(index): \(record["comment"]?.stringValue ?? "")"
      guard let document = record["doc"], let wire = record["patch"] else {
        Issue.record("\(label): no doc or patch")
        continue
      }
      ran += 1
      if let expected = record["expected"] {
        do {
          let patch = try JSONPatch(json: wire)
          var result = document
          try patch.apply(to: &result)
          #expect(result == expected, "\(label)")
        } catch {
          Issue.record("\(label): failed with \(error)")
        }
      } else if record["error"] != nil {
        // Either the patch does not decode, or it fails to apply and leaves the document as it
        // was.
        guard let patch = try? JSONPatch(json: wire) else { continue }
        var result = document
        do {
          try patch.apply(to: &result)
          Issue.record("\(label): applied although it must fail")
        } catch {
          #expect(result == document, "\(label): document changed by a failed patch")
          #expect(error.operationIndex != nil, "\(label)")
        }
      } else {
        #expect(throws: Never.self, "\(label)") {
          _ = try JSONPatch(json: wire).applied(to: document)
        }
      }
    }
    #expect(ran == expectedRuns, "\(file): records run")
  }

  /// The diff of each record's document and expected result applies back to that result, on
  /// documents written by other people.
  @Test func diffReproducesEveryExpectedDocument() throws {
    var checked = 0
    for file in ["tests.json", "spec_tests.json"] {
      let records = try JSON(
        parsing: TestData.bytes(suiteFolder, file), options: .allowDuplicateKeys)
      for record in records.arrayValue ?? [] {
        guard let old = record["doc"], let new = record["expected"] else { continue }
        let patch = JSONPatch.diff(from: old, to: new)
        #expect(try patch.applied(to: old) == new, "\(old) -> \(new): \(patch.json)")
        checked += 1
      }
    }
    #expect(checked >= 75)
  }
}

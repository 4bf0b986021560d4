import StateKit
import StateServer
import Testing

/// The emitted `replaysReplaySession` passes on this build (ReplaySessionTests.swift); these
/// prove it would fail. No switch makes a reducer behave otherwise, so the recorded side
/// changes instead: a recorded patch that differs from the one served is exactly what a changed
/// reducer looks like to the emitted test.
@StateActor @Suite struct ReplaySessionChangeTests {
  @Test func aRecordedPatchThatDiffersIsReportedAtItsStep() async throws {
    var steps = replaySessionSteps
    let patch = try #require(steps.first?.expected.first)
    #expect(patch.contains(#""path":"/count","value":1"#))
    steps[0].expected[0] = patch.replacing(#""value":1"#, with: #""value":99"#)
    let harness = try ServerTestHarness(features: applicationFeatures(clock:))
    defer { harness.close() }
    let differences = try await harness.replay(steps)
    #expect(differences.count == 1)
    #expect(differences.first?.hasPrefix("store counter, line 1 of it (step 1)") == true)
    #expect(differences.first?.contains("99") == true)
  }

  @Test func aPatchTheRecordingDoesNotHoldIsReported() async throws {
    // The last step advances 10 ms and `incrementLater`'s increment fires: recorded without it,
    // the session has one line more than the recording.
    var steps = replaySessionSteps
    let last = steps.count - 1
    #expect(steps[last].expected.first?.contains(#""path":"/count","value":2"#) == true)
    steps[last].expected.removeFirst()
    let harness = try ServerTestHarness(features: applicationFeatures(clock:))
    defer { harness.close() }
    let differences = try await harness.replay(steps)
    #expect(differences.count == 1)
    #expect(
      differences.first?.hasPrefix("store counter, line 2 of it (after the last step)") == true)
  }

  @Test func aResponseThatDiffersIsReportedAtItsStep() async throws {
    var steps = replaySessionSteps
    let last = steps.count - 1
    let response = try #require(steps[last].expected.last)
    steps[last].expected[steps[last].expected.count - 1] = response.replacing(
      #""now":410"#, with: #""now":411"#)
    let harness = try ServerTestHarness(features: applicationFeatures(clock:))
    defer { harness.close() }
    let differences = try await harness.replay(steps)
    #expect(differences.count == 1)
    #expect(differences.first?.hasPrefix("step \(steps.count): the response") == true)
  }
}

import JSON
import StateKit

/// Whether a recording is one this application can replay: made by it (its name), with
/// features whose schemas are the ones it runs (their fingerprints).
extension Replay {
  /// Refuses another application's recording; notes another version of this one. A recording
  /// that names no application (made before headers named it) is left to the fingerprint.
  static func checkApplication(
    _ recorded: RecordedApplication?, number: Int, replaying ours: RecordedApplication,
    note: (String) -> Void
  ) throws(Refusal) {
    guard let recorded, recorded != ours else { return }
    guard recorded.name == ours.name else {
      throw Refusal(
        "line \(number): recorded by the application \(recorded.description), not by "
          + "\(ours.name); replay it with `\(recorded.name) replay FILE`")
    }
    note(
      "recorded by \(recorded.description), replayed by \(ours.description); the features' "
        + "fingerprints decide whether it can be")
  }

  static func checkHeader(_ line: JSON, number: Int, features: [FeatureDescriptor])
    throws(Refusal)
  {
    guard line["format"]?.stringValue == Fingerprint.format else {
      throw Refusal(
        "line \(number): not a stateserver recording (no \"format\": \"\(Fingerprint.format)\")")
    }
    let ours = Fingerprint.features(features)
    guard line["fingerprint"]?.stringValue != Fingerprint.combined(ours) else { return }
    let theirs = line["features"]?.objectValue
    var differences: [String] = []
    for (name, fingerprint) in ours where theirs?[name]?.stringValue != fingerprint {
      differences.append(theirs?[name] == nil ? "\(name) (not recorded)" : name)
    }
    if let theirs {
      for (name, _) in theirs.members where !ours.contains(where: { $0.name == name }) {
        differences.append("\(name) (not in this server)")
      }
    }
    let recorded =
      RecordedApplication(header: line)?.description
      ?? "server \(line["server"]?.stringValue ?? "?")"
    throw Refusal(
      "recorded with other features (\(recorded), fingerprint "
        + "\(line["fingerprint"]?.stringValue ?? "none")); schemas differ for: "
        + (differences.isEmpty ? "the set as a whole" : differences.joined(separator: ", ")))
  }
}

import JSON

/// The application a recording was made with: the name and version given to `Server.main`
/// (the reference executable's are `stateserver` and the library's version). The recording's
/// header carries it as `"application": {"name", "version"}`, beside `"server"`, the
/// stateserver library's version.
///
/// Replay compares it with its own: another name is another application, refused with status
/// 2 like another fingerprint (its features would be another app's, however alike their
/// schemas); another version of the same application is replayed when the fingerprints
/// match, with a note on stderr, because a release that kept its features' schemas usually
/// kept their reducers too, and a divergence is then reported where it happens.
struct RecordedApplication: Equatable, Sendable {
  var name: String
  var version: String

  var json: JSON {
    ["name": .string(name), "version": .string(version)]
  }

  /// The application named in a header line; nil when the header has none (a recording made
  /// before headers named their application) or it is malformed.
  init?(header: JSON) {
    guard let name = header["application"]?["name"]?.stringValue,
      let version = header["application"]?["version"]?.stringValue
    else { return nil }
    self.init(name: name, version: version)
  }

  init(name: String, version: String) {
    self.name = name
    self.version = version
  }

  var description: String { "\(name) \(version)" }
}

import JSON
import StateKit

/// What a recording says about the features it was made with: one fingerprint per feature
/// (FNV-1a, 64 bits, of its name and its view, action and event schemas) and one over all.
/// Replay refuses a recording whose fingerprints differ from the running binary's.
enum Fingerprint {
  static let format = "stateserver-recording"

  static func features(_ features: [FeatureDescriptor]) -> [(name: String, fingerprint: String)] {
    features.sorted { $0.name < $1.name }.map { feature in
      let schemas: JSON = [
        "name": .string(feature.name), "state": feature.viewSchema,
        "actions": .object(
          JSONObject(feature.actionSchemas.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })),
        "events": .object(
          JSONObject(feature.eventSchemas.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })),
      ]
      return (feature.name, hash((try? schemas.serialized()) ?? []))
    }
  }

  static func combined(_ fingerprints: [(name: String, fingerprint: String)]) -> String {
    hash(Array(fingerprints.map { "\($0.name)=\($0.fingerprint);" }.joined().utf8))
  }

  private static func hash(_ bytes: [UInt8]) -> String {
    var value: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
      value ^= UInt64(byte)
      value = value &* 0x100_0000_01b3
    }
    let text = String(value, radix: 16)
    return String(repeating: "0", count: 16 - text.count) + text
  }
}

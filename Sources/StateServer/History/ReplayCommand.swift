import StateKit

extension Server {
  /// `replay [--emit pytest|swift] [--out FILE] FILE`: without `--emit`, replays FILE
  /// (``Replay``); with it, writes a test that asserts the recorded session (``ReplayEmitter``).
  @StateActor
  static func replay(
    _ arguments: [String], name: String, version: String,
    features: () -> [FeatureDescriptor]
  ) -> Int32 {
    let usage = "usage: \(name) replay [--emit pytest|swift] [--out FILE] FILE\n"
    var emit: String?
    var out: String?
    var files: [String] = []
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      switch argument {
      case "--emit", "--out":
        guard let value = rest.popFirst() else {
          StandardStream.writeAll("\(name) replay: \(argument) needs a value\n" + usage, to: 2)
          return 2
        }
        if argument == "--emit" { emit = value } else { out = value }
      default:
        files.append(argument)
      }
    }
    guard files.count == 1, let path = files.first else {
      StandardStream.writeAll(usage, to: 2)
      return 2
    }
    guard let emit else {
      guard out == nil else {
        StandardStream.writeAll("\(name) replay: --out is for --emit\n" + usage, to: 2)
        return 2
      }
      return Replay.run(path: path, features: features(), name: name, version: version)
    }
    return ReplayEmitter.run(path: path, target: emit, out: out, name: name)
  }
}

// json-tool: drives the JSON layer from outside Swift, for benchmarks and for checking our
// patches against other languages' libraries. Each subcommand lives in a file of its own and
// is listed here.
import Foundation
import JSON

let arguments = Array(CommandLine.arguments.dropFirst())
let subcommands: [String: ([String]) -> Int32] = [
  "roundtrip": RoundTripCommand.run,
  "diff": DiffCommand.run,
  "bench-patch": PatchBenchCommand.run,
  "codable": CodableCommand.run,
]

guard let name = arguments.first, let run = subcommands[name] else {
  let names = subcommands.keys.sorted().joined(separator: ", ")
  FileHandle.standardError.write(
    Data("usage: json-tool <subcommand> [args...]; subcommands: \(names)\n".utf8))
  exit(2)
}
exit(run(Array(arguments.dropFirst())))

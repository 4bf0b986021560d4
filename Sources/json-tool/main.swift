// json-tool: drives the JSON layer from outside Swift, for benchmarks and for checking our
// patches against other languages' libraries. Each subcommand lives in a file of its own.
import JSON

#if canImport(Glibc)
  import Glibc
#endif

let arguments = Array(CommandLine.arguments.dropFirst())
let subcommands: [String: ([String]) -> Int32] = [:]

guard let name = arguments.first, let run = subcommands[name] else {
  let names = subcommands.keys.sorted().joined(separator: ", ")
  fputs("usage: json-tool <subcommand> [args...]; subcommands: \(names)\n", stderr)
  exit(2)
}
exit(run(Array(arguments.dropFirst())))

// The stateserver executable: the server's command line and the reference features.
import Features
import Foundation
import StateServer

let interface = CommandLineInterface(
  name: "stateserver", version: Server.version,
  summary: "stateserver: a headless application core speaking JSON-RPC 2.0 (NDJSON) on stdio.",
  flags: ServerOptions.flags)

switch interface.parse(CommandLine.arguments.dropFirst(), into: ServerOptions()) {
case .print(let text):
  FileHandle.standardOutput.write(Data(text.utf8))
  exit(0)
case .usageError(let message):
  FileHandle.standardError.write(Data(message.utf8))
  exit(2)
case .run(let options):
  let server = Server(features: [], options: options)
  exit(await server.run())
}

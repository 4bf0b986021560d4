/// The command line of an executable built on the server: flags with values, `--help` and
/// `--version`. Adding a flag is one ``Flag`` in the list given to ``init(name:version:summary:flags:)``.
///
/// ```swift
/// var flags = CommandLineInterface<AppOptions>.serverFlags(\.server)
/// flags.append(Flag("--seed", value: "N", help: "seed of the simulated backend") {
///   $0.seed = try FlagValue.integer($1, of: "--seed")
/// })
/// switch CommandLineInterface(name: "stateserver", version: "1.0.0", summary: "...", flags: flags)
///   .parse(CommandLine.arguments.dropFirst(), into: AppOptions()) { ... }
/// ```
public struct CommandLineInterface<Options>: Sendable {
  /// The program's name, as in messages (`stateserver: unknown option ...`).
  public var name: String
  /// Printed by `--version`.
  public var version: String
  /// The first line of `--help`.
  public var summary: String
  /// Every flag, in the order `--help` lists them.
  public var flags: [Flag<Options>]

  /// A command line of `flags`; `--help` and `--version` are always understood.
  public init(name: String, version: String, summary: String, flags: [Flag<Options>]) {
    self.name = name
    self.version = version
    self.summary = summary
    self.flags = flags
  }

  /// What the executable should do after reading its arguments.
  public enum Outcome {
    /// Run with these options.
    case run(Options)
    /// Print `text` on stdout and exit 0 (`--help`, `--version`: no protocol runs then).
    case print(String)
    /// Print `message` on stderr and exit with status 2.
    case usageError(String)
  }

  /// Reads `arguments` (without the program name) into `options`, starting from the
  /// defaults it holds; `--flag value` and `--flag=value` are both accepted.
  public func parse<Arguments: Sequence<String>>(_ arguments: Arguments, into options: Options)
    -> Outcome
  {
    var options = options
    var remaining = Array(arguments)[...]
    while let argument = remaining.popFirst() {
      if argument == "--help" || argument == "-h" { return .print(help) }
      if argument == "--version" { return .print("\(name) \(version)\n") }
      let (flagName, inlineValue) = split(argument)
      guard let flag = flag(named: flagName) else {
        return .usageError(
          "\(name): unknown option '\(argument)'\nRun '\(name) --help' to see the options.\n")
      }
      var value: String? = nil
      if flag.valueIsOptional {
        // `--listen` alone or `--listen PATH`: the next argument is its value unless it is an
        // option itself.
        value =
          inlineValue ?? (remaining.first?.hasPrefix("-") == false ? remaining.popFirst() : nil)
      } else if flag.valueName != nil {
        value = inlineValue ?? remaining.popFirst()
        guard value != nil else {
          return .usageError("\(name): option '\(flag.name)' needs a value\n")
        }
      } else if inlineValue != nil {
        return .usageError("\(name): option '\(flag.name)' takes no value\n")
      }
      do {
        try flag.apply(&options, value ?? "")
      } catch {
        return .usageError("\(name): \(error.message)\n")
      }
    }
    return .run(options)
  }

  /// The `--help` text: the summary, then one aligned line per flag.
  public var help: String {
    var text = "\(summary)\n\nUsage: \(name) [options]\n\nOptions:\n"
    let rows =
      flags.map { flag in
        (flag.name + (flag.valueName.map { " " + $0 } ?? ""), flag.help)
      } + [("--version", "print the version and exit"), ("--help", "print this help and exit")]
    let width = rows.map(\.0.count).max() ?? 0
    for (left, right) in rows {
      text += "  " + left + String(repeating: " ", count: width - left.count + 2) + right + "\n"
    }
    return text
  }

  /// The flag called `name`. By index, not `first(where:)`: this type is generic over
  /// `Options` and not specialized, and the generic `Sequence` method looked its element type
  /// up at run time, a scan of every protocol conformance in the binary that every start-up
  /// paid for (docs/architecture.md, "Nothing built at start that a later request can build").
  private func flag(named name: String) -> Flag<Options>? {
    for index in flags.indices where flags[index].name == name { return flags[index] }
    return nil
  }

  private func split(_ argument: String) -> (String, String?) {
    guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else {
      return (argument, nil)
    }
    return (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
  }
}

/// One command-line flag: its name, the placeholder of its value (nil for a switch), a line of
/// help, and how it changes the options.
public struct Flag<Options>: Sendable {
  /// `--name`, as typed.
  public var name: String
  /// The placeholder of the value in `--help` (`SECONDS`); nil for a switch without value.
  public var valueName: String?
  /// Whether the value may be left out (`--listen` or `--listen PATH`); `apply` then gets `""`.
  public var valueIsOptional = false
  /// One line for `--help`.
  public var help: String
  /// Stores the value (`""` for a switch) into the options, or throws a usage error.
  public var apply: @Sendable (inout Options, String) throws(UsageError) -> Void

  /// A flag; `valueName` nil makes it a switch.
  public init(
    _ name: String, value valueName: String? = nil, help: String,
    apply: @escaping @Sendable (inout Options, String) throws(UsageError) -> Void
  ) {
    self.name = name
    self.valueName = valueName
    self.help = help
    self.apply = apply
  }

  /// The same flag acting on a part of larger options, so an executable can add its own flags
  /// next to the server's.
  public func lifted<Whole>(_ part: WritableKeyPath<Whole, Options> & Sendable) -> Flag<Whole> {
    let apply = self.apply
    var lifted = Flag<Whole>(name, value: valueName, help: help) {
      (whole, value) throws(UsageError) in
      try apply(&whole[keyPath: part], value)
    }
    lifted.valueIsOptional = valueIsOptional
    return lifted
  }
}

/// A command-line mistake, worded for the person who typed it.
public struct UsageError: Error, Sendable {
  /// What was wrong and what would be right, without the program name.
  public var message: String
  /// A usage error saying `message`.
  public init(_ message: String) { self.message = message }
}

/// Parsers for flag values, with messages that name the flag.
public enum FlagValue {
  /// Parses a non-negative integer value.
  public static func integer(_ text: String, of flag: String) throws(UsageError) -> Int {
    guard let value = Int(text), value >= 0 else {
      throw UsageError("option '\(flag)' expects a non-negative integer, got '\(text)'")
    }
    return value
  }

  /// Parses an integer within `range`; the message names both bounds.
  public static func integer(_ text: String, of flag: String, in range: ClosedRange<Int>)
    throws(UsageError) -> Int
  {
    guard let value = Int(text), range.contains(value) else {
      throw UsageError(
        "option '\(flag)' expects an integer from \(range.lowerBound) to \(range.upperBound), "
          + "got '\(text)'")
    }
    return value
  }

  /// Parses a duration in seconds (`2`, `0.5`) from 0 to `maximum`: a bound keeps the value
  /// representable (`1e16` seconds overflowed the milliseconds and crashed, issue 10).
  public static func seconds(_ text: String, of flag: String, maximum: Double = 86_400)
    throws(UsageError) -> Duration
  {
    guard let value = Double(text), value >= 0, value <= maximum else {
      throw UsageError(
        "option '\(flag)' expects a number of seconds from 0 to \(Int(maximum)) such as 2 or 0.5, "
          + "got '\(text)'")
    }
    return .milliseconds(Int64((value * 1000).rounded()))
  }

  /// Parses one of `choices`.
  public static func choice(_ text: String, of flag: String, _ choices: [String]) throws(UsageError)
    -> String
  {
    guard choices.contains(text) else {
      throw UsageError(
        "option '\(flag)' expects one of \(choices.joined(separator: ", ")), got '\(text)'")
    }
    return text
  }
}

extension ServerOptions {
  /// The server's own flags.
  public static let flags: [Flag<ServerOptions>] = [
    Flag("--ephemeral", help: "keep every store in memory; read and write nothing on disk") {
      options, _ in options.ephemeral = true
    },
    Flag("--state-dir", value: "DIR", help: "where persistent stores live") { options, value in
      options.stateDirectory = value
    },
    Flag("--log-level", value: "LEVEL", help: "error, warning (default), info or debug") {
      (options, value) throws(UsageError) in
      let name = try FlagValue.choice(value, of: "--log-level", Log.Level.allCases.map(\.name))
      options.logLevel = Log.Level.allCases.first { $0.name == name } ?? .warning
    },
    Flag("--log-format", value: "FORMAT", help: "text (default) or json; logs go to stderr") {
      (options, value) throws(UsageError) in
      let name = try FlagValue.choice(
        value, of: "--log-format", Log.Format.allCases.map(\.rawValue))
      options.logFormat = Log.Format(rawValue: name) ?? .text
    },
    // A limit of 0 would refuse every line, and one past 1 GiB is no limit on a machine's
    // memory: both are mistakes, said at start rather than met at the first request.
    Flag(
      "--max-message-bytes", value: "N",
      help: "longest accepted input line, 1 to 1073741824 (default 16777216)"
    ) {
      (options, value) throws(UsageError) in
      options.maxMessageBytes = try FlagValue.integer(
        value, of: "--max-message-bytes", in: 1...ServerOptions.maximumMessageBytesLimit)
    },
    Flag(
      "--drain-timeout", value: "SECONDS",
      help: "how long effects may finish at shutdown, 0 to 86400 (default 2)"
    ) {
      (options, value) throws(UsageError) in
      options.drainTimeout = try FlagValue.seconds(value, of: "--drain-timeout")
    },
    {
      var flag = Flag<ServerOptions>(
        "--listen", value: "[PATH]",
        help:
          "also serve your other clients on a Unix socket (default $XDG_RUNTIME_DIR/stateserver/PID.sock); `stateserver attach PATH` joins one"
      ) { options, value in
        options.listen = value.isEmpty ? .defaultPath : .path(value)
      }
      flag.valueIsOptional = true
      return flag
    }(),
    Flag("--history", value: "N", help: "changes of history kept per store (default 1000; 0: off)")
    {
      (options, value) throws(UsageError) in
      options.historyLimit = try FlagValue.integer(value, of: "--history")
    },
    Flag("--clock", value: "CLOCK", help: "real (default) or virtual: moved by clock/advance") {
      (options, value) throws(UsageError) in
      let name = try FlagValue.choice(
        value, of: "--clock", ServerClock.Mode.allCases.map(\.rawValue))
      options.clock.mode = ServerClock.Mode(rawValue: name) ?? .real
    },
    Flag("--record", value: "FILE", help: "append every store's history to FILE (NDJSON)") {
      options, value in options.recordPath = value
    },
  ]
}

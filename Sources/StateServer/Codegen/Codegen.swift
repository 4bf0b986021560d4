import FoundationEssentials
import JSON
import StateKit

/// `stateserver codegen --lang typescript|python --out DIR`: typed bindings of every
/// registered feature, generated from the JSON Schemas `features/list` returns.
///
/// A feature whose schemas are incomplete (``FeatureDescriptor/schemaProblems``) is refused:
/// bindings never say "anything" where the Swift type says something the probe missed.
public enum Codegen {
  /// The languages and the file each writes in `--out`.
  public static let languages = [
    "typescript": TypeScriptBindings.fileName, "python": PythonBindings.fileName,
  ]

  public static let usage = """
    usage: stateserver codegen --lang typescript|python --out DIR

    Writes typed bindings of every registered feature (its state, its actions and events as
    unions discriminated by "type") to DIR/features.d.ts or DIR/features.py.

    """

  /// Runs the command with `arguments` (after `codegen`); returns the exit status: 0, 1 when
  /// the bindings cannot be generated, 2 for a usage error. Messages go to stderr.
  @StateActor
  public static func run(_ arguments: [String], features: [FeatureDescriptor]) -> Int32 {
    var language: String?
    var directory: String?
    var rest = arguments[...]
    while let argument = rest.popFirst() {
      switch argument {
      case "--help", "-h":
        StandardStream.writeAll(usage, to: 1)
        return 0
      case "--lang": language = rest.popFirst()
      case "--out": directory = rest.popFirst()
      default:
        return fail(2, "codegen: unknown argument '\(argument)'\n" + usage)
      }
    }
    guard let language, let fileName = languages[language] else {
      return fail(2, "codegen: --lang must be typescript or python\n" + usage)
    }
    guard let directory else { return fail(2, "codegen: --out DIR is required\n" + usage) }
    do throws(CodegenError) {
      let text = try render(language: language, features: features)
      let url = URL(fileURLWithPath: directory, isDirectory: true)
      do {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url.appendingPathComponent(fileName), options: .atomic)
      } catch {
        throw CodegenError("cannot write \(directory)/\(fileName): \(error)")
      }
      return 0
    } catch {
      return fail(1, "codegen: \(error)\n")
    }
  }

  /// The bindings' text in `language` (`typescript` or `python`).
  @StateActor
  static func render(language: String, features: [FeatureDescriptor]) throws(CodegenError)
    -> String
  {
    var bindings: [FeatureBinding] = []
    for feature in features {
      if let problem = feature.schemaProblems.first {
        throw CodegenError("feature '\(feature.name)' has no complete schema at \(problem)")
      }
      bindings.append(try FeatureBinding(listed: Connection.describe(feature)))
    }
    return language == "python"
      ? try PythonBindings.render(bindings) : TypeScriptBindings.render(bindings)
  }

  private static func fail(_ status: Int32, _ message: String) -> Int32 {
    StandardStream.writeAll(message, to: 2)
    return status
  }
}

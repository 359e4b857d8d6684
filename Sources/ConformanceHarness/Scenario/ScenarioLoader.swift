import ChatProtocol
import MockChatCore
import Foundation

/// Reads scenario files and checks them completely before anything runs: every key,
/// step, method, property and matcher must be known and every value of the right type.
/// Problems are reported as `file:line:column: message`, with a "did you mean".
public enum ScenarioLoader {
    /// The scenario files under the given files or folders (`*.yaml`, `*.yml`), sorted by path.
    public static func sources(paths: [String]) throws(ScenarioError) -> [ScenarioSource] {
        var files: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                throw ScenarioError("\(path): no such file or folder")
            }
            guard isFolder.boolValue else {
                files.append(path)
                continue
            }
            let walker = FileManager.default.enumerator(atPath: path)
            while let entry = walker?.nextObject() as? String {
                if entry.hasSuffix(".yaml") || entry.hasSuffix(".yml") { files.append(path + "/" + entry) }
            }
        }
        var sources: [ScenarioSource] = []
        for file in files.sorted() {
            guard let data = FileManager.default.contents(atPath: file) else { throw ScenarioError("\(file): cannot read") }
            sources.append(ScenarioSource(path: file, text: String(decoding: data, as: UTF8.self)))
        }
        return sources
    }

    /// Loads every source it can; each file that cannot be loaded (or reuses an id)
    /// is returned as a ``BrokenScenario`` instead of ending the load.
    public static func load(_ sources: [ScenarioSource],
                            ruleBook: RuleBook = .embedded) -> (scenarios: [Scenario], broken: [BrokenScenario]) {
        var scenarios: [Scenario] = []
        var broken: [BrokenScenario] = []
        var seen: [String: String] = [:]
        for source in sources {
            do throws(ScenarioError) {
                let scenario = try load(source.text, path: source.path, ruleBook: ruleBook)
                if let other = seen.updateValue(scenario.path, forKey: scenario.id) {
                    var error = ScenarioError("scenario id '\(scenario.id)' is also used by \(other)",
                                              at: SourceLocation(line: 1, column: 1))
                    error.file = source.path
                    broken.append(BrokenScenario(path: source.path, error: error))
                } else {
                    scenarios.append(scenario)
                }
            } catch {
                broken.append(BrokenScenario(path: source.path, error: error))
            }
        }
        return (scenarios, broken)
    }

    /// Loads every file under `paths`, failing on the first problem (for tools and tests
    /// that want all or nothing).
    public static func loadAll(paths: [String]) throws(ScenarioError) -> [Scenario] {
        let (scenarios, broken) = load(try sources(paths: paths))
        if let first = broken.first { throw first.error }
        return scenarios
    }

    /// Parses one step written as YAML or JSON (used by generators of scenarios).
    public static func step(_ raw: JSONValue, number: Int) throws(ScenarioError) -> Step {
        var reader = ScenarioReader(locations: SourceLocations())
        reader.lenientNames = true
        let (action, rules) = try reader.step(raw, path: ["steps", String(number - 1)])
        return Step(number: number, action: action, text: raw.description, rules: rules, command: reader.command)
    }

    /// Parses the steps of a generated scenario, numbered from 1, in one reader: a call
    /// reads with the device its client was declared with.
    public static func steps(_ raw: [JSONValue]) throws(ScenarioError) -> [Step] {
        var reader = ScenarioReader(locations: SourceLocations())
        reader.lenientNames = true
        var steps: [Step] = []
        for (offset, step) in raw.enumerated() {
            let (action, rules) = try reader.step(step, path: ["steps", String(offset)])
            steps.append(Step(number: offset + 1, action: action, text: step.description, rules: rules, command: reader.command))
        }
        return steps
    }

    /// The assertions of an `expect` step written as YAML (`alice.frames: {event: user.online}`),
    /// checked as a file's would be; returns the mapping.
    public static func assertions(yaml text: String) throws(ScenarioError) -> JSONValue {
        let value = try YAMLDocument.parse(text).value
        guard value.objectValue?.isEmpty == false else {
            throw ScenarioError("give assertions as a mapping, e.g. 'alice.frames: {event: user.online, user.uid: bob}'")
        }
        _ = try step(["expect": value], number: 1)
        return value
    }

    /// A YAML document as the scenario reader sees it, before any check (for generators
    /// of scenario files, such as the fuzzer's).
    public static func document(yaml text: String) throws(ScenarioError) -> JSONValue {
        try YAMLDocument.parse(text).value
    }

    /// Parses and checks one scenario document.
    public static func load(_ text: String, path: String = "<memory>",
                            ruleBook: RuleBook = .embedded) throws(ScenarioError) -> Scenario {
        do throws(ScenarioError) {
            let (root, locations) = try YAMLDocument.parse(text)
            var reader = ScenarioReader(locations: locations, ruleBook: ruleBook)
            return try reader.scenario(root, path: path)
        } catch {
            var located = error
            located.file = path
            throw located
        }
    }

    /// The longest duration a scenario may give: 366 days, as the control API's clock advance.
    public static let maxDurationSeconds = BoundedNumber.yearSeconds

    /// A number of seconds, or a string such as `250ms`, `30s`, `2m`, `1h`, from 0 to
    /// ``maxDurationSeconds``; checked before it becomes milliseconds.
    public static func duration(_ value: JSONValue) throws(ScenarioError) -> Int64 {
        var seconds = value.doubleValue
        if seconds == nil, let text = value.stringValue {
            let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3_600)]
            if let (suffix, scale) = units.first(where: { text.hasSuffix($0.0) }),
               let number = Double(text.dropLast(suffix.count)) {
                seconds = number * scale
            } else {
                throw ScenarioError("cannot read duration '\(text)'")
            }
        }
        guard let seconds else { throw ScenarioError("a duration is seconds or a string like 30s") }
        do {
            return try BoundedNumber.milliseconds(seconds: seconds, "a duration", in: 0...maxDurationSeconds)
        } catch {
            throw ScenarioError(error.description)
        }
    }
}

/// One scenario file's path and text (from disk or the built-in catalogue).
public struct ScenarioSource: Sendable {
    public var path: String
    public var text: String
    public init(path: String, text: String) {
        self.path = path
        self.text = text
    }
}

/// A file that could not be loaded; it becomes an `error` verdict in the run.
public struct BrokenScenario: Sendable {
    public var path: String
    public var error: ScenarioError
}

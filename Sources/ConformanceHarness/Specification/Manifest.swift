import ChatProtocol
import Foundation

/// What an SDK team declares about its SDK (docs/SPECIFICATION.md, "The manifest"): its
/// name and version, the profile it follows, its own values of the rule book's parameters,
/// the features it implements and the rules it differs from on purpose.
///
///     sdk: { name: mockchat-python-sdk, version: 0.4.0 }
///     profile: cometchat-ios
///     parameters: { keepAliveInterval: 25 }
///     features: { exclude: [users/list] }
///     waivers:
///       - rule: connection.status-connecting-during-backoff
///         reason: our status enum has no 'connecting' while waiting
public struct Manifest: Sendable {
    public var sdkName: String?
    public var sdkVersion: String?
    public var profile: String?
    /// Declared values by parameter name, each checked against its unit.
    public var parameters: [String: JSONValue] = [:]
    /// Feature ids implemented (nil: all but `excluded`).
    public var included: [String]?
    public var excluded: [String] = []
    /// Rule id → the reason the SDK differs.
    public var waivers: [String: String] = [:]
    /// Where it was read from (a file, or the driver's hello).
    public var origin: String

    public init(origin: String) {
        self.origin = origin
    }

    /// Whether the SDK implements `feature`: a node is implemented when it or a node
    /// above it is included (or nothing is listed as included) and neither it nor a node
    /// above it is excluded.
    public func implements(_ feature: String) -> Bool {
        let lineage = FeatureTree.lineage(feature)
        if lineage.contains(where: excluded.contains) { return false }
        guard let included else { return true }
        return lineage.contains(where: included.contains)
    }

    /// Reads a manifest file.
    public static func load(path: String, ruleBook: RuleBook = .embedded) throws(ScenarioError) -> Manifest {
        guard let data = FileManager.default.contents(atPath: path) else { throw ScenarioError("\(path): cannot read the manifest") }
        return try read(String(decoding: data, as: UTF8.self), origin: path, ruleBook: ruleBook)
    }

    /// Reads a manifest written as YAML (or JSON, which is YAML too).
    public static func read(_ text: String, origin: String, ruleBook: RuleBook = .embedded) throws(ScenarioError) -> Manifest {
        do throws(ScenarioError) {
            let (root, locations) = try YAMLDocument.parse(text)
            return try ManifestReader(locations: locations, ruleBook: ruleBook).manifest(root, origin: origin)
        } catch {
            var located = error
            located.file = origin
            throw located
        }
    }

    /// The `manifest` object of a driver's hello.
    public static func read(hello value: JSONValue, origin: String, ruleBook: RuleBook = .embedded) throws(ScenarioError) -> Manifest {
        try ManifestReader(locations: SourceLocations(), ruleBook: ruleBook).manifest(value, origin: origin)
    }
}

/// Checks a manifest against the rule book: every parameter, feature and rule it names
/// must exist, and every value must fit its parameter's unit.
struct ManifestReader {
    let locations: SourceLocations
    let ruleBook: RuleBook
    static let keys = ["sdk", "profile", "parameters", "features", "waivers"]

    private func fail(_ message: String, _ path: [String]) -> ScenarioError {
        ScenarioError(message, at: locations.nearest(path))
    }

    func manifest(_ root: JSONValue, origin: String) throws(ScenarioError) -> Manifest {
        guard let object = root.objectValue else { throw fail("a manifest is a mapping of sdk, profile, parameters, features, waivers", []) }
        for key in object.keys where !Self.keys.contains(key) {
            throw fail("unknown key '\(key)'" + Suggestion.hint(for: key, among: Self.keys), [key])
        }
        var manifest = Manifest(origin: origin)
        manifest.sdkName = object["sdk"]?["name"]?.stringValue
        manifest.sdkVersion = object["sdk"]?["version"]?.description
        if let version = object["sdk"]?["version"]?.stringValue { manifest.sdkVersion = version }
        if let profile = object["profile"] {
            guard let name = profile.stringValue else { throw fail("'profile' is a profile name such as cometchat-ios", ["profile"]) }
            manifest.profile = name
        }
        if let parameters = object["parameters"] {
            guard let mapping = parameters.objectValue else { throw fail("'parameters' is a mapping of parameter name: value", ["parameters"]) }
            for (name, value) in mapping {
                let at = ["parameters", name]
                guard let rule = ruleBook.parameterRule(name), let parameter = rule.parameter else {
                    throw fail("unknown parameter '\(name)'" + Suggestion.hint(for: name, among: ruleBook.parameterNames), at)
                }
                if let problem = Self.problem(value, parameter) { throw fail("parameter '\(name)': \(problem)", at) }
                manifest.parameters[name] = value
            }
        }
        if let features = object["features"] {
            guard let mapping = features.objectValue else { throw fail("'features' is {include: [...]} or {exclude: [...]}", ["features"]) }
            for (key, list) in mapping {
                let at = ["features", key]
                guard key == "include" || key == "exclude" else {
                    throw fail("unknown key '\(key)'" + Suggestion.hint(for: key, among: ["include", "exclude"]), at)
                }
                guard let items = list.arrayValue else { throw fail("'\(key)' takes a list of feature ids", at) }
                var ids: [String] = []
                for (index, item) in items.enumerated() {
                    guard let id = item.stringValue, ruleBook.features.contains(id) else {
                        let name = item.stringValue ?? item.description
                        throw fail("unknown feature '\(name)'" + Suggestion.hint(for: name, among: ruleBook.features.ids), at + [String(index)])
                    }
                    ids.append(id)
                }
                if key == "include" { manifest.included = ids } else { manifest.excluded = ids }
            }
        }
        if let waivers = object["waivers"] {
            guard let list = waivers.arrayValue else { throw fail("'waivers' is a list of {rule, reason}", ["waivers"]) }
            for (index, item) in list.enumerated() {
                let at = ["waivers", String(index)]
                guard let id = item["rule"]?.stringValue else { throw fail("a waiver needs 'rule': a rule id", at) }
                guard let rule = ruleBook.rule(id) else {
                    let near = Suggestion.closest(to: id, among: ruleBook.rules.map(\.id)).map { " (did you mean '\($0)'?)" } ?? ""
                    throw fail("unknown rule '\(id)'\(near)", at + ["rule"])
                }
                guard rule.level != .documented else {
                    throw fail("\(id) is documented: it cannot be waived, only decisions and parameters can", at + ["rule"])
                }
                guard let reason = item["reason"]?.stringValue, !reason.isEmpty else {
                    throw fail("the waiver of \(id) needs a 'reason'", at)
                }
                manifest.waivers[id] = reason
            }
        }
        return manifest
    }

    /// Why `value` does not fit `parameter`, or nil.
    static func problem(_ value: JSONValue, _ parameter: RuleParameter) -> String? {
        switch parameter.unit {
        case .seconds: return value.doubleValue.map { $0 >= 0 ? nil : "seconds cannot be negative" } ?? "must be a number of seconds"
        case .count: return value.intValue.map { $0 >= 0 ? nil : "a count cannot be negative" } ?? "must be a whole number"
        case .code: return value.stringValue != nil || value.intValue != nil ? nil : "must be a code (a name or a number)"
        case .text: return value.stringValue != nil ? nil : "must be a text"
        case .table:
            let steps = value["steps"]?.arrayValue
            guard let steps, steps.allSatisfy({ ($0.doubleValue ?? -1) >= 0 }), (value["repeatEvery"]?.doubleValue ?? 0) > 0 else {
                return "must be {steps: [seconds, ...], repeatEvery: seconds}"
            }
            return nil
        }
    }
}

import ChatProtocol
import ReferenceClient

/// Reads and checks the rule book's YAML files (docs/SPECIFICATION.md). Every problem is
/// reported where it is written, as `file:line:column: message`: an unknown level, a
/// duplicate id, a missing source, a parameter rule without its parameter, an unknown feature.
public enum RuleBookReader {
    static let ruleKeys = ["id", "level", "text", "source", "feature", "decision", "parameter"]
    static let parameterKeys = ["name", "default", "unit"]

    /// Reads `files` (path, text): any file may hold `features:` (id: title) and `rules:` (a list).
    public static func read(_ files: [(path: String, text: String)]) throws(ScenarioError) -> RuleBook {
        var documents: [(path: String, root: JSONObject, locations: SourceLocations)] = []
        for file in files.sorted(by: { $0.path < $1.path }) {
            do throws(ScenarioError) {
                let (root, locations) = try YAMLDocument.parse(file.text)
                guard let object = root.objectValue else {
                    throw ScenarioError("a rule book file is a mapping with 'rules:' and/or 'features:'", at: .init(line: 1, column: 1))
                }
                for key in object.keys where !["rules", "features"].contains(key) {
                    throw ScenarioError("unknown top-level key '\(key)'" + Suggestion.hint(for: key, among: ["rules", "features"]),
                                        at: locations[[key]])
                }
                documents.append((file.path, object, locations))
            } catch {
                throw located(error, file.path)
            }
        }
        var features = FeatureTree()
        for document in documents {
            do throws(ScenarioError) { features = try readFeatures(document.root, document.locations, into: features) } catch {
                throw located(error, document.path)
            }
        }
        var rules: [Rule] = []
        var ids: [String: String] = [:]
        var parameters: [String: String] = [:]
        for document in documents {
            guard let list = document.root["rules"] else { continue }
            let reader = Reader(locations: document.locations, path: document.path, features: features)
            do throws(ScenarioError) {
                guard let items = list.arrayValue else { throw reader.fail("'rules' must be a list of rules", ["rules"]) }
                for index in items.indices {
                    let at = ["rules", String(index)]
                    let rule = try reader.rule(items[index], at: at)
                    if let other = ids.updateValue(rule.origin, forKey: rule.id) {
                        throw reader.fail("duplicate rule id '\(rule.id)': also written at \(other)", at + ["id"])
                    }
                    if let name = rule.parameter?.name, let other = parameters.updateValue(rule.origin, forKey: name) {
                        throw reader.fail("parameter '\(name)' already belongs to the rule at \(other)", at + ["parameter", "name"])
                    }
                    rules.append(rule)
                }
            } catch {
                throw located(error, document.path)
            }
        }
        return RuleBook(rules: rules, features: features)
    }

    private static func located(_ error: ScenarioError, _ path: String) -> ScenarioError {
        var error = error
        error.file = error.file ?? path
        return error
    }

    /// `features: {id: title}`; every id's parent must be declared too.
    private static func readFeatures(_ root: JSONObject, _ locations: SourceLocations,
                                     into tree: FeatureTree) throws(ScenarioError) -> FeatureTree {
        guard let raw = root["features"] else { return tree }
        guard let mapping = raw.objectValue else {
            throw ScenarioError("'features' must be a mapping of feature id: one-line title", at: locations[["features"]])
        }
        var titles = tree.titles
        for (id, title) in mapping {
            let at = locations[["features", id]]
            guard isFeatureId(id) else {
                throw ScenarioError("feature id '\(id)' must be lower-case words joined by '-' and '/' (e.g. background/services)", at: at)
            }
            guard let text = title.stringValue, !text.isEmpty else { throw ScenarioError("feature '\(id)' needs a one-line title", at: at) }
            guard titles.updateValue(text, forKey: id) == nil else { throw ScenarioError("feature '\(id)' is declared twice", at: at) }
        }
        for (id, _) in mapping {
            if let parent = FeatureTree.parent(of: id), titles[parent] == nil {
                throw ScenarioError("feature '\(id)' needs its parent '\(parent)' declared too", at: locations[["features", id]])
            }
        }
        return FeatureTree(titles: titles)
    }

    static func isFeatureId(_ id: String) -> Bool {
        !id.isEmpty && id.split(separator: "/", omittingEmptySubsequences: false).allSatisfy(isKebab)
    }

    static func isKebab(_ word: Substring) -> Bool {
        guard let first = word.first, first.isLowercase, first.isASCII else { return false }
        return word.allSatisfy { ($0.isLowercase || $0.isNumber || $0 == "-") && $0.isASCII } && word.last != "-"
    }

    /// Reads one file's rules.
    private struct Reader {
        let locations: SourceLocations
        let path: String
        let features: FeatureTree

        func fail(_ message: String, _ at: [String]) -> ScenarioError {
            ScenarioError(message, at: locations.nearest(at))
        }

        func rule(_ raw: JSONValue, at: [String]) throws(ScenarioError) -> Rule {
            guard let object = raw.objectValue else { throw fail("a rule is a mapping of id, level, text, source, feature", at) }
            for key in object.keys where !RuleBookReader.ruleKeys.contains(key) {
                throw fail("unknown key '\(key)'" + Suggestion.hint(for: key, among: RuleBookReader.ruleKeys), at + [key])
            }
            func text(_ key: String, why: String) throws(ScenarioError) -> String {
                guard let value = object[key] else { throw fail("rule needs '\(key)': \(why)", at) }
                guard let string = value.stringValue, !string.trimmingCharacters(in: .whitespaces).isEmpty else {
                    throw fail("'\(key)' must be a non-empty string", at + [key])
                }
                return string
            }
            let id = try text("id", why: "<area>.<kebab-name>, e.g. connection.keep-alive-interval")
            let parts = id.split(separator: ".", omittingEmptySubsequences: false)
            guard parts.count >= 2, parts.allSatisfy(RuleBookReader.isKebab) else {
                throw fail("rule id '\(id)' must be <area>.<kebab-name> (lower case, '-' between words)", at + ["id"])
            }
            let levelName = try text("level", why: "documented, decision or parameter")
            let levels = RuleLevel.allCases.map(\.rawValue)
            guard let level = RuleLevel(rawValue: levelName) else {
                throw fail("unknown level '\(levelName)' of \(id)" + Suggestion.hint(for: levelName, among: levels), at + ["level"])
            }
            let statement = try text("text", why: "the rule in a sentence")
            let source = try text("source", why: "the seed file and section, or 'decision: <reasoning>'")
            if level == .documented, source.hasPrefix("decision") {
                throw fail("\(id) is documented, so its source names a seed file and section, not a decision", at + ["source"])
            }
            let feature = try text("feature", why: "the node of the feature tree (Fixtures/spec/features.yaml) it belongs to")
            guard features.contains(feature) else {
                throw fail("unknown feature '\(feature)' of \(id)" + Suggestion.hint(for: feature, among: features.ids), at + ["feature"])
            }
            var decision: String?
            if object["decision"] != nil { decision = try text("decision", why: "") }
            var parameter: RuleParameter?
            switch (level, object["parameter"]) {
            case (.parameter, nil):
                throw fail("\(id) is a parameter rule: give 'parameter: {name, default, unit}'", at)
            case (.parameter, let raw?):
                parameter = try self.parameter(raw, at: at + ["parameter"])
            case (_, nil):
                break
            case (_, .some):
                throw fail("only a rule of level 'parameter' has a 'parameter' (\(id) is \(level.rawValue))", at + ["parameter"])
            }
            let line = locations.nearest(at)?.line ?? 1
            return Rule(id: id, level: level, text: statement, source: source, feature: feature, decision: decision,
                        parameter: parameter, origin: "\(path):\(line)")
        }

        private func parameter(_ raw: JSONValue, at: [String]) throws(ScenarioError) -> RuleParameter {
            guard let object = raw.objectValue else { throw fail("'parameter' is a mapping of name, default, unit", at) }
            for key in object.keys where !RuleBookReader.parameterKeys.contains(key) {
                throw fail("unknown key '\(key)'" + Suggestion.hint(for: key, among: RuleBookReader.parameterKeys), at + [key])
            }
            guard let name = object["name"]?.stringValue, let first = name.first, first.isLetter,
                  name.allSatisfy({ $0.isLetter || $0.isNumber }) else {
                throw fail("'parameter.name' must be a name of letters and digits (the profile key when there is one)", at + ["name"])
            }
            guard let value = object["default"], !value.isNull else {
                throw fail("parameter '\(name)' needs 'default': MockChat's value", at + ["default"])
            }
            let units = RuleParameter.Unit.allCases.map(\.rawValue)
            guard let unitName = object["unit"]?.stringValue else {
                throw fail("parameter '\(name)' needs 'unit': one of \(units.joined(separator: ", "))", at)
            }
            guard let unit = RuleParameter.Unit(rawValue: unitName) else {
                throw fail("unknown unit '\(unitName)'" + Suggestion.hint(for: unitName, among: units), at + ["unit"])
            }
            // `{cometchat-ios: 10, nexconn-ios: 5}`: a value per profile; null where a profile does not have it.
            let profiles = Set(EmbeddedProfiles.files.keys)
            if let byProfile = value.objectValue, !byProfile.isEmpty, byProfile.keys.allSatisfy(profiles.contains) {
                let given = byProfile.filter { !$0.value.isNull }
                guard let first = given.first else { throw fail("parameter '\(name)' needs a value for at least one profile", at + ["default"]) }
                let perProfile = Dictionary(uniqueKeysWithValues: given.map { ($0.key, $0.value) })
                return RuleParameter(name: name, defaultValue: first.value, perProfile: perProfile, unit: unit)
            }
            if unit == .seconds, value.doubleValue == nil {
                throw fail("parameter '\(name)' is in seconds: its default must be a number", at + ["default"])
            }
            return RuleParameter(name: name, defaultValue: value, perProfile: [:], unit: unit)
        }
    }
}

import ChatProtocol

/// docs/CONFORMANCE.md, generated from the rule book, the catalogue and the documents'
/// statements (`docs/statements.yaml`).
///
/// The document is hand-written prose with generated regions between
/// `<!-- generated: NAME -->` and `<!-- /generated -->`; ``update(_:)`` rewrites those
/// regions and leaves the prose alone, and ``staleRegions(in:)`` names the regions that
/// differ from what the rule book and the catalogue give now.
public struct ConformanceDocument: Sendable {
    /// One statement of a vendor document, paraphrased, with the rules that carry it.
    public struct Statement: Sendable, Equatable {
        /// `000.12`: the document's number and the statement's.
        public var id: String
        public var text: String
        /// The document's own section names.
        public var section: String
        public var rules: [String]
        /// Why no rule carries it (something a simulation cannot have).
        public var untestable: String?

        /// The document's number: `000`.
        public var document: String { String(id.prefix { $0 != "." }) }
    }

    public let book: RuleBook
    public let scenarios: [Scenario]
    public let statements: [Statement]

    public init(book: RuleBook, scenarios: [Scenario], statements: [Statement]) {
        self.book = book
        self.scenarios = scenarios.sorted { $0.id < $1.id }
        self.statements = statements
    }

    // MARK: What the sources say

    /// Ids of the scenarios that name `rule`, at the top or in an `expect` step.
    public func scenarios(checking rule: String) -> [String] {
        scenarios.filter { $0.rules.contains(rule) || $0.steps.contains { $0.rules.contains(rule) } }.map(\.id)
    }

    /// What is wrong between the statements, the rule book and the catalogue: a statement
    /// naming an unknown rule or none, a documented rule no statement carries, a
    /// statement no scenario checks.
    public var problems: [String] {
        var found: [String] = []
        var carried: Set<String> = []
        for statement in statements {
            if statement.rules.isEmpty, statement.untestable == nil {
                found.append("statement \(statement.id) names no rule and does not say why it is untestable")
            }
            for id in statement.rules {
                guard let rule = book.rule(id) else {
                    found.append("statement \(statement.id) names the unknown rule '\(id)'")
                    continue
                }
                carried.insert(id)
                if rule.level != .documented {
                    found.append("statement \(statement.id) names \(id), which is a \(rule.level.rawValue), not a documented rule")
                }
            }
            if !statement.rules.isEmpty, statement.rules.allSatisfy({ scenarios(checking: $0).isEmpty }) {
                found.append("statement \(statement.id) is checked by no scenario")
            }
        }
        for rule in book.rules where rule.level == .documented && !carried.contains(rule.id) {
            found.append("the documented rule \(rule.id) (\(rule.origin)) is carried by no statement of docs/statements.yaml")
        }
        return found
    }

    // MARK: The generated regions

    /// Every generated region by name, in the order they appear in the document.
    public var regions: [(name: String, text: String)] {
        var result: [(String, String)] = [("summary", summary)]
        for document in Self.orderedUnique(statements.map(\.document)) {
            result.append(("statements-\(document)", statementTable(document)))
        }
        result.append(("rules", ruleTables))
        result.append(("parameters", parameterTable))
        result.append(("decisions", decisionTable))
        result.append(("model-only", modelOnly))
        return result
    }

    /// `document` with each generated region replaced by its current text.
    public func update(_ document: String) throws(ScenarioError) -> String {
        var text = document
        for (name, body) in regions {
            guard let range = Self.region(name, in: text) else {
                throw ScenarioError("docs/CONFORMANCE.md has no region '\(Self.open(name))' ... '\(Self.close)'")
            }
            text.replaceSubrange(range, with: "\n" + body + "\n")
        }
        return text
    }

    /// The names of the regions whose text in `document` is not what the sources give now.
    public func staleRegions(in document: String) -> [String] {
        regions.compactMap { name, body in
            guard let range = Self.region(name, in: document) else { return name }
            return document[range] == "\n" + body + "\n" ? nil : name
        }
    }

    static func open(_ name: String) -> String { "<!-- generated: \(name) -->" }
    static let close = "<!-- /generated -->"

    /// The text between a region's markers.
    static func region(_ name: String, in text: String) -> Range<String.Index>? {
        guard let start = text.range(of: open(name)),
              let end = text.range(of: close, range: start.upperBound..<text.endIndex) else { return nil }
        return start.upperBound..<end.lowerBound
    }

    private var summary: String {
        let count = { (level: RuleLevel) in book.rules.filter { $0.level == level }.count }
        let named = scenarios.filter { !$0.rules.isEmpty }.count
        let areas = Self.orderedUnique(scenarios.map { String($0.id.prefix { $0 != "/" }) }).sorted()
            .map { area in "\(area) \(scenarios.filter { $0.id.hasPrefix(area + "/") }.count)" }
        return "The rule book holds **\(book.rules.count) rules**: \(count(.documented)) documented, "
            + "\(count(.decision)) decisions and \(count(.parameter)) parameters, over \(book.features.ids.count) "
            + "features.\n\n**The catalogue holds \(scenarios.count) scenarios**: \(areas.joined(separator: ", ")); "
            + "\(named) of them name the rules they check."
    }

    private func statementTable(_ document: String) -> String {
        var lines = ["| # | Statement (paraphrased) | Section | Rules | Scenario ids |", "|---|---|---|---|---|"]
        for statement in statements where statement.document == document {
            let rules = statement.rules.map { "`\($0)`" }.joined(separator: ", ")
            let checked = Self.orderedUnique(statement.rules.flatMap(scenarios(checking:))).joined(separator: ", ")
            let last = statement.untestable.map { "not testable here: \($0)" } ?? checked
            lines.append("| \(statement.id) | \(statement.text) | \(statement.section) | \(rules) | \(last) |")
        }
        return lines.joined(separator: "\n")
    }

    private var ruleTables: String {
        var blocks: [String] = []
        for area in Self.orderedUnique(book.rules.map { String($0.id.prefix { $0 != "." }) }) {
            var lines = ["### \(area)", "", "| Rule | Level | Text | Source | Scenario ids |", "|---|---|---|---|---|"]
            for rule in book.rules where rule.id.hasPrefix(area + ".") {
                let level = rule.decision.map { "\(rule.level.rawValue) (\($0))" } ?? rule.level.rawValue
                let checked = scenarios(checking: rule.id)
                let ids = checked.isEmpty ? "model only" : checked.joined(separator: ", ")
                lines.append("| `\(rule.id)` | \(level) | \(Self.cell(rule.text)) | \(Self.cell(rule.source)) | \(ids) |")
            }
            blocks.append(lines.joined(separator: "\n"))
        }
        return blocks.joined(separator: "\n\n")
    }

    private var parameterTable: String {
        var lines = ["| Parameter | MockChat's value | Unit | Rule |", "|---|---|---|---|"]
        for rule in book.rules {
            guard let parameter = rule.parameter else { continue }
            let value = parameter.perProfile.isEmpty
                ? Self.show(parameter.defaultValue)
                : parameter.perProfile.keys.sorted().map { "\($0): \(Self.show(parameter.perProfile[$0]!))" }.joined(separator: "; ")
            lines.append("| `\(parameter.name)` | \(value) | \(parameter.unit.rawValue) | `\(rule.id)` |")
        }
        return lines.joined(separator: "\n")
    }

    private var decisionTable: String {
        let numbered = book.rules.filter { $0.decision != nil }
        let numbers = Set(numbered.compactMap(\.decision)).sorted { Int($0.dropFirst()) ?? 0 < Int($1.dropFirst()) ?? 0 }
        var lines = ["| Old decision | Rules |", "|---|---|"]
        for number in numbers {
            let rules = numbered.filter { $0.decision == number }.map { "`\($0.id)`" }.joined(separator: ", ")
            lines.append("| \(number) | \(rules) |")
        }
        return lines.joined(separator: "\n")
    }

    private var modelOnly: String {
        let unchecked = book.rules.filter { scenarios(checking: $0.id).isEmpty }
        guard !unchecked.isEmpty else { return "Every rule is checked by at least one scenario." }
        return unchecked.map { "- `\($0.id)` (\($0.level.rawValue)): \($0.text)" }.joined(separator: "\n")
    }

    // MARK: Text helpers

    static func cell(_ text: String) -> String { text.replacingOccurrences(of: "|", with: "\\|") }

    static func show(_ value: JSONValue) -> String {
        if let text = value.stringValue { return "`\(text)`" }
        return "`\(value.description)`"
    }

    static func orderedUnique(_ items: [String]) -> [String] {
        var seen: Set<String> = []
        return items.filter { seen.insert($0).inserted }
    }
}

extension ConformanceDocument {
    /// Reads `statements: [{id, text, section, rules | untestable}]`; a problem names `path:line`.
    public static func statements(yaml text: String, path: String) throws(ScenarioError) -> [Statement] {
        do throws(ScenarioError) {
            return try readStatements(text)
        } catch {
            var located = error
            located.file = located.file ?? path
            throw located
        }
    }

    private static func readStatements(_ text: String) throws(ScenarioError) -> [Statement] {
        let (root, locations) = try YAMLDocument.parse(text)
        guard let list = root["statements"]?.arrayValue else {
            throw ScenarioError("'statements' must be a list", at: SourceLocation(line: 1, column: 1))
        }
        var result: [Statement] = []
        for (index, raw) in list.enumerated() {
            guard let object = raw.objectValue, let id = object["id"]?.stringValue,
                  let statement = object["text"]?.stringValue, let section = object["section"]?.stringValue else {
                throw ScenarioError("a statement needs id, text and section (strings)",
                                    at: locations.nearest(["statements", String(index)]))
            }
            let rules = object["rules"]?.arrayValue?.compactMap(\.stringValue) ?? []
            result.append(Statement(id: id, text: statement, section: section, rules: rules,
                                    untestable: object["untestable"]?.stringValue))
        }
        return result
    }
}

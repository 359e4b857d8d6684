@testable import ConformanceHarness
import ChatProtocol
import Foundation
import ReferenceClient
import Testing

/// The rule book loads from Fixtures/spec, matches its built-in copy and the profiles, and
/// every mistake in it is reported at its file and line.
@Suite struct RuleBookTests {
    static let features = ("features.yaml", """
        features:
          connection: Connecting
          connection/keep-alive: Heartbeats
        """)

    /// The message of loading `rules` (a `rules:` file) beside the features above.
    func problem(_ rules: String) -> String {
        do {
            _ = try RuleBookReader.read([Self.features, ("connection.yaml", rules)])
            return "loaded"
        } catch {
            return error.description
        }
    }

    static let good = """
        rules:
          - id: connection.keep-alive-interval
            level: parameter
            text: The SDK pings every keepAliveInterval seconds.
            source: "decision: no period is documented"
            feature: connection/keep-alive
            parameter: { name: keepAliveInterval, default: 10, unit: seconds }
        """

    @Test func aGoodBookLoads() throws {
        let book = try RuleBookReader.read([Self.features, ("connection.yaml", Self.good)])
        let rule = try #require(book.rule("connection.keep-alive-interval"))
        #expect(rule.level == .parameter)
        #expect(rule.origin == "connection.yaml:2")
        #expect(book.parameterRule("keepAliveInterval")?.parameter?.defaultValue == 10)
        #expect(problem(Self.good) == "loaded")
    }

    @Test func anUnknownLevelIsNamedWithASuggestion() {
        #expect(problem(Self.good.replacingOccurrences(of: "level: parameter", with: "level: paramter"))
                == "connection.yaml:3:5: unknown level 'paramter' of connection.keep-alive-interval (did you mean 'parameter'?)")
    }

    @Test func aDuplicateIdNamesBothPlaces() {
        let twice = Self.good + "\n" + Self.good.dropFirst("rules:\n".count)
            .replacingOccurrences(of: "keepAliveInterval,", with: "other,")
        #expect(problem(twice) == "connection.yaml:8:5: duplicate rule id 'connection.keep-alive-interval': also written at connection.yaml:2")
    }

    @Test func aMissingSourceIsAnError() {
        let text = Self.good.split(separator: "\n").filter { !$0.contains("source:") }.joined(separator: "\n")
        #expect(problem(text) == "connection.yaml:2:5: rule needs 'source': the seed file and section, or 'decision: <reasoning>'")
    }

    @Test func aParameterRuleNeedsItsParameter() {
        let text = Self.good.split(separator: "\n").filter { !$0.contains("parameter: {") }.joined(separator: "\n")
        #expect(problem(text) == "connection.yaml:2:5: connection.keep-alive-interval is a parameter rule: give 'parameter: {name, default, unit}'")
        let documented = Self.good.replacingOccurrences(of: "level: parameter", with: "level: decision")
        #expect(problem(documented) == "connection.yaml:7:5: only a rule of level 'parameter' has a 'parameter' (connection.keep-alive-interval is decision)")
    }

    @Test func anUnknownFeatureIsNamedWithASuggestion() {
        #expect(problem(Self.good.replacingOccurrences(of: "feature: connection/keep-alive", with: "feature: connection/keepalive"))
                == "connection.yaml:6:5: unknown feature 'connection/keepalive' of connection.keep-alive-interval (did you mean 'connection/keep-alive'?)")
    }

    @Test func aDocumentedRuleCitesADocument() {
        let text = Self.good.replacingOccurrences(of: "level: parameter", with: "level: documented")
        #expect(problem(text) == "connection.yaml:5:5: connection.keep-alive-interval is documented, so its source names a seed file and section, not a decision")
    }

    @Test func aFeatureNeedsItsParent() {
        do {
            _ = try RuleBookReader.read([("features.yaml", "features:\n  background/services: Kept 30 s\n")])
            Issue.record("loaded")
        } catch {
            #expect(error.description == "features.yaml:2:3: feature 'background/services' needs its parent 'background' declared too")
        }
    }

    /// The copy compiled into the binary must match Fixtures/spec: the EmbedFixtures plugin
    /// copies every file at build time, each without its last line break.
    @Test func builtInRuleBookMatchesFixturesAndLoads() throws {
        let folder = Package.path("Fixtures/spec")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".yaml") }
        let embedded = Dictionary(uniqueKeysWithValues: EmbeddedRuleBook.files.map { ($0.path, $0.text) })
        #expect(Set(files) == Set(embedded.keys), "the EmbedFixtures plugin missed or added a file")
        for file in files {
            let text = try String(contentsOfFile: folder + "/" + file, encoding: .utf8)
            #expect(embedded[file] == text.trimmingTrailingNewline, "\(file) differs from the built-in copy")
        }
        #expect(!RuleBook.embedded.rules.isEmpty)
    }

    /// A parameter named after a profile key has the profile's value as its default.
    @Test func parameterDefaultsAreTheProfilesValues() throws {
        for (name, text) in EmbeddedProfiles.files {
            let profile = try #require(try YAMLDocument.parse(text).value.objectValue)
            for rule in RuleBook.embedded.rules {
                guard let parameter = rule.parameter, let value = profile[parameter.name], !value.isNull else { continue }
                #expect(parameter.defaultValue(profile: name) == value, "\(rule.origin): \(parameter.name) in \(name).yaml")
            }
        }
    }
}

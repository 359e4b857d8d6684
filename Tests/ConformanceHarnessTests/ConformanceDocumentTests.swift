@testable import ConformanceHarness
import Foundation
import Testing

/// docs/CONFORMANCE.md agrees with the rule book, the catalogue and docs/statements.yaml,
/// and a stale document or a broken statement is caught.
@Suite struct ConformanceDocumentTests {
    func generator(_ statements: [ConformanceDocument.Statement]? = nil) throws -> ConformanceDocument {
        let path = Package.path("docs/statements.yaml")
        let read = try ConformanceDocument.statements(yaml: try String(contentsOfFile: path, encoding: .utf8), path: path)
        let scenarios = try TestPlan.make(paths: [], filter: nil, expectedFailuresFile: nil).scenarios
        return ConformanceDocument(book: .embedded, scenarios: scenarios, statements: statements ?? read)
    }

    func document() throws -> String {
        try String(contentsOfFile: Package.path("docs/CONFORMANCE.md"), encoding: .utf8)
    }

    @Test func theDocumentIsUpToDate() throws {
        let generator = try generator()
        #expect(generator.staleRegions(in: try document()) == [], "run: mockchat spec docs --write")
        #expect(generator.problems == [])
    }

    @Test func everyRuleHasARowAndEveryStatementItsScenarios() throws {
        let generator = try generator()
        let text = try document()
        for rule in RuleBook.embedded.rules {
            #expect(text.contains("| `\(rule.id)` | \(rule.level.rawValue)"), "no row for \(rule.id)")
        }
        for statement in generator.statements where statement.untestable == nil {
            #expect(!statement.rules.flatMap(generator.scenarios(checking:)).isEmpty, "\(statement.id)")
        }
    }

    @Test func aStaleDocumentIsNamedByRegion() throws {
        let generator = try generator()
        let fresh = try generator.update(try document())
        let noScenario = fresh.replacingOccurrences(of: "connection/auto/login-connects, ", with: "")
        #expect(generator.staleRegions(in: noScenario).contains("statements-000"))
        let count = generator.scenarios.count
        let oldCount = fresh.replacingOccurrences(of: "**The catalogue holds \(count) scenarios**",
                                                  with: "**The catalogue holds \(count - 1) scenarios**")
        #expect(generator.staleRegions(in: oldCount) == ["summary"])
        let lostRegion = fresh.replacingOccurrences(of: "<!-- generated: parameters -->", with: "")
        #expect(generator.staleRegions(in: lostRegion) == ["parameters"])
        #expect(throws: ScenarioError.self) { try generator.update(lostRegion) }
    }

    @Test func aStatementThatNamesAnUnknownOrUndocumentedRuleOrNoneIsAProblem() throws {
        var statements = try generator().statements
        statements[0].rules = ["connection.login-opens-sockets"]
        statements[1].rules = ["calls.second-login-refused"]
        statements[2].rules = []
        let problems = try generator(statements).problems
        #expect(problems.contains("statement 000.1 names the unknown rule 'connection.login-opens-sockets'"))
        #expect(problems.contains("statement 000.2 names calls.second-login-refused, which is a decision, not a documented rule"))
        #expect(problems.contains("statement 000.3 names no rule and does not say why it is untestable"))
        #expect(problems.contains { $0.hasPrefix("the documented rule connection.logout-closes-socket ") })
    }
}

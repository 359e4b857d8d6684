import ChatProtocol
import ConformanceHarness
import Foundation
import MockChatServer
@testable import ProtocolFuzzer
import Testing

/// Model mode end to end against the real in-process server. A clean campaign is
/// `make fuzz-smoke`'s job; these tests check what a campaign relies on.
@Suite struct ModelFuzzerTests {
    func options(seed: UInt64, steps: Int) -> ModelFuzzer.Options {
        var options = ModelFuzzer.Options()
        options.seed = seed
        options.steps = steps
        options.historyLength = 150
        options.outputFolder = nil
        options.jobs = 2
        return options
    }

    @Test func theSameSeedGivesTheSameRun() {
        let first = ModelFuzzer(options: options(seed: 9, steps: 600)).run()
        let second = ModelFuzzer(options: options(seed: 9, steps: 600)).run()
        #expect(first.histories == second.histories)
        #expect(first.stepsByKind == second.stepsByKind)
    }

    /// A model that is wrong about one fixture (carol's role) stands in for a server
    /// bug: the run must notice, shrink the history to a few actions and write a
    /// scenario that fails the same way when `mockchat test` loads it.
    @Test func aDivergenceIsShrunkAndWrittenAsAFailingScenario() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-test-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var options = options(seed: 3, steps: 6_000)
        options.outputFolder = folder
        options.maxReports = 1
        let report = ModelFuzzer(options: options, roster: Self.rosterWithCarolAs("support")).run()
        #expect(report.divergences > 0)
        let finding = try #require(report.findings.first)
        #expect(finding.reproduces, "\(finding.shrunkMessage)")
        #expect(finding.shrunkActions <= 5, "\(finding.scenarioText)")
        let path = try #require(finding.path)
        let scenario = try ScenarioLoader.load(String(contentsOfFile: path, encoding: .utf8), path: path)
        let result = ScenarioRunner(options: CatalogueRunner.Options()).run(scenario)
        #expect(result.verdict == .failed)
        #expect(finding.scenarioText.contains("uid: carol"), "\(finding.scenarioText)")
    }

    static func rosterWithCarolAs(_ role: String) -> Roster {
        guard case .object(let document)? = try? JSONParser.parse(EmbeddedFixtures.users),
              let users = document["users"]?.arrayValue else { return .embedded() }
        let changed = users.map { user -> JSONValue in
            guard user["uid"] == "carol", var object = user.objectValue else { return user }
            object["role"] = .string(role)
            return .object(object)
        }
        return Roster(usersDocument: ["users": .array(changed)])
    }
}

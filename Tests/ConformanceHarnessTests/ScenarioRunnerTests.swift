#if canImport(FoundationXML)
import FoundationXML
#endif
import ConformanceHarness
import Foundation
import MockChatTestSupport
import Testing

/// The package root and its fixtures, found from this file's location.
enum Package {
    static let root = PackagePaths.root

    static func path(_ relative: String) -> String { PackagePaths.path(relative) }

    /// A runner that finds the profiles wherever the tests are started from.
    static func runner(seed: UInt64? = nil) -> ScenarioRunner {
        var options = CatalogueRunner.Options()
        options.seed = seed
        options.recordTimeline = true
        var runner = ScenarioRunner(options: options)
        runner.profilesFolder = path("Fixtures/profiles")
        return runner
    }

    static func load(_ relative: String) throws -> Scenario {
        try ScenarioLoader.loadAll(paths: [path(relative)]).first!
    }
}

@Suite struct ScenarioRunnerTests {
    @Test func wrongExpectationFailsNamingStepExpectedAndActual() throws {
        let scenario = try Package.load("Tests/ConformanceHarnessTests/Fixtures/wrong-expectation.yaml")
        let result = Package.runner().run(scenario)
        #expect(result.verdict == .failed)
        #expect(result.isFailure)
        #expect(result.failedStep == 4)
        let message = try #require(result.message)
        #expect(message.contains("step 4"))
        #expect(message.contains("expected: a.status: \"disconnected\""))
        #expect(message.contains("actual:   \"connected\""))
        #expect(!result.traceTail.isEmpty)
    }

    /// The loader finds every scenario file of the catalogue, and nothing else.
    @Test func catalogueIsEveryScenarioFileAndNoOther() throws {
        let folder = Package.path("Fixtures/scenarios")
        let catalogue = try ScenarioLoader.loadAll(paths: [folder])
        let files = FileManager.default.enumerator(atPath: folder)?
            .compactMap { $0 as? String }.filter { $0.hasSuffix(".yaml") } ?? []
        #expect(!files.isEmpty)
        #expect(catalogue.count == files.count)
        #expect(!catalogue.contains { $0.id == "harness/wrong-expectation" })
    }

    @Test func sameSeedGivesByteIdenticalTraces() throws {
        let scenario = try Package.load("Fixtures/scenarios/reconnection/nexconn-backoff-schedule.yaml")
        let first = Package.runner(seed: 42).run(scenario)
        let second = Package.runner(seed: 42).run(scenario)
        #expect(first.verdict == .passed, "\(first.message ?? "")")
        #expect(second.verdict == .passed, "\(second.message ?? "")")
        #expect(!first.trace.isEmpty)
        #expect(first.trace == second.trace)
    }

    @Test func catalogueScenarioPassesOnItsOwn() throws {
        let scenario = try Package.load("Fixtures/scenarios/background/manual-dropped-at-30s.yaml")
        let result = Package.runner().run(scenario)
        #expect(result.verdict == .passed, "\(result.message ?? "")")
        #expect(result.virtualSeconds == 630)
    }

    @Test func junitReportIsWellFormedXML() throws {
        let scenarios = [
            try Package.load("Fixtures/scenarios/connection/auto-login-connects.yaml"),
            try Package.load("Tests/ConformanceHarnessTests/Fixtures/wrong-expectation.yaml"),
            try ScenarioLoader.load("""
                id: harness/skipped
                title: Skipped on purpose
                source: "000_b8b030ded7652e86.txt, Auto Mode"
                skip: "reason with <markup> & \\"quotes\\""
                steps:
                  - client: a
                """),
        ]
        let runner = Package.runner()
        let results = scenarios.map { runner.run($0) }
        let xml = JUnitReport.render(results, wallSeconds: 0.5)
        let document = try XMLDocument(xmlString: xml, options: [])
        let root = try #require(document.rootElement())
        #expect(root.name == "testsuites")
        #expect(root.attribute(forName: "tests")?.stringValue == "3")
        #expect(root.attribute(forName: "failures")?.stringValue == "1")
        #expect(root.attribute(forName: "skipped")?.stringValue == "1")
        let cases = try document.nodes(forXPath: "//testsuite/testcase")
        #expect(cases.count == 3)
        let failures = try document.nodes(forXPath: "//testcase[@name='harness/wrong-expectation']/failure")
        #expect(failures.count == 1)
        #expect(failures.first?.stringValue?.contains("expected: a.status") == true)
        #expect(try document.nodes(forXPath: "//testcase[@name='harness/skipped']/skipped").count == 1)
    }

    @Test func loaderNamesAMissingID() {
        let text = """
            title: No id
            source: "000_b8b030ded7652e86.txt, Auto Mode"
            steps:
              - client: a
            """
        #expect {
            _ = try ScenarioLoader.load(text)
        } throws: { error in
            "\(error)".contains("'id' is required")
        }
    }

    @Test func loaderNamesAnUnknownStep() {
        let text = """
            id: harness/unknown-step
            title: Unknown step
            source: "000_b8b030ded7652e86.txt, Auto Mode"
            steps:
              - client: a
              - dance: 3
            """
        #expect {
            _ = try ScenarioLoader.load(text)
        } throws: { error in
            let text = "\(error)"
            return text.contains("<memory>:6:5: unknown step 'dance'")
        }
    }

    @Test func loaderNamesAnUnknownServerStep() {
        let text = """
            id: harness/unknown-server-step
            title: Unknown server step
            source: "000_b8b030ded7652e86.txt, Auto Mode"
            steps:
              - server.explode: {}
            """
        #expect {
            _ = try ScenarioLoader.load(text)
        } throws: { error in
            "\(error)".contains("unknown server step 'explode'")
        }
    }

    @Test func loaderNamesTheFileOfADuplicateID() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("harness-dup-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = "id: harness/same\ntitle: t\nsource: s\nsteps:\n  - client: a\n"
        try body.write(to: folder.appendingPathComponent("one.yaml"), atomically: true, encoding: .utf8)
        try body.write(to: folder.appendingPathComponent("two.yaml"), atomically: true, encoding: .utf8)
        #expect {
            _ = try ScenarioLoader.loadAll(paths: [folder.path])
        } throws: { error in
            "\(error)".contains("harness/same") && "\(error)".contains("one.yaml") && "\(error)".contains("two.yaml")
        }
    }

    @Test func unknownClientMethodIsALoadErrorWithASuggestion() {
        #expect {
            _ = try ScenarioLoader.load("""
                id: harness/unknown-method
                title: Unknown method
                source: "000_b8b030ded7652e86.txt, Auto Mode"
                steps:
                  - client: a
                  - a.logni: alice
                """)
        } throws: { error in
            "\(error)" == "<memory>:6:5: unknown client method 'logni' (did you mean 'login'?)"
        }
    }
}

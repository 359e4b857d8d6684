import ConformanceHarness
import Foundation
import ReferenceClient
import Testing

/// What a run covers: broken files, filters, expected-failure lists, the built-in catalogue.
@Suite struct TestPlanTests {
    /// A temporary folder with the given files.
    func folder(_ files: [String: String]) throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plan-\(getpid())-\(UUID().uuidString)")
        for (name, text) in files {
            let url = folder.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
        return folder.path
    }

    static let good = """
        id: harness/good
        title: Good
        source: "000_b8b030ded7652e86.txt, Auto Mode"
        steps:
          - client: a
          - a.init: {}
          - a.login: alice
          - expect: { a.status: connected }
        """

    @Test func aBrokenFileBecomesAnErrorAndTheOthersRun() throws {
        let root = try folder(["good.yaml": Self.good, "broken.yaml": "id: harness/broken\ntitle: [unclosed\n",
                               "typo.yaml": Self.good.replacingOccurrences(of: "harness/good", with: "harness/typo")
                                   .replacingOccurrences(of: "a.status", with: "a.stauts")])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let plan = try TestPlan.make(paths: [root], filter: nil, expectedFailuresFile: nil)
        #expect(plan.scenarios.map(\.id) == ["harness/good"])
        #expect(plan.broken.count == 2)
        #expect(plan.broken.allSatisfy { $0.verdict == .error && $0.isFailure })
        let typo = try #require(plan.broken.first { $0.path.hasSuffix("typo.yaml") })
        #expect(typo.message?.hasSuffix("typo.yaml:8:15: unknown client property 'stauts' (did you mean 'status'?)") == true)
        var options = CatalogueRunner.Options()
        options.profilesFolder = Package.path("Fixtures/profiles")
        let results = CatalogueRunner(options: options).run(plan.scenarios) + plan.broken
        #expect(ConsoleReport.summaryLine(results) == "scenarios: 1 passed, 0 failed, 0 skipped, 2 errors")
    }

    @Test func aFilterMatchingNothingIsAnError() throws {
        let root = try folder(["good.yaml": Self.good])
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(throws: ScenarioError.self) { try TestPlan.make(paths: [root], filter: "presence/*", expectedFailuresFile: nil) }
        #expect(try TestPlan.make(paths: [root], filter: "harness/*", expectedFailuresFile: nil).scenarios.count == 1)
    }

    @Test func aStaleExpectedFailureIsAnError() throws {
        let root = try folder(["good.yaml": Self.good, "expected-failures.txt": "# known\nharness/gone  # fixed long ago\n"])
        defer { try? FileManager.default.removeItem(atPath: root) }
        do {
            _ = try TestPlan.make(paths: [root], filter: nil, expectedFailuresFile: nil)
            Issue.record("a stale id was accepted")
        } catch {
            #expect(error.description.contains("expected-failures.txt:2: 'harness/gone' is not the id of any scenario"))
        }
        try "harness/good\n".write(toFile: root + "/expected-failures.txt", atomically: true, encoding: .utf8)
        #expect(try TestPlan.make(paths: [root], filter: nil, expectedFailuresFile: nil).expectedFailures == ["harness/good"])
    }

    @Test func noPathRunsTheBuiltInCatalogue() throws {
        let plan = try TestPlan.make(paths: [], filter: "connection/*", expectedFailuresFile: nil)
        #expect(plan.broken.isEmpty)
        #expect(plan.scenarios.count >= 30)
        // With the built-in profiles: no Fixtures folder needed.
        let result = ScenarioRunner(options: CatalogueRunner.Options()).run(plan.scenarios[0])
        #expect(result.verdict == .passed, "\(result.message ?? "")")
    }

    /// The copies compiled into the binary must match Fixtures/: the EmbedFixtures plugin
    /// copies every file at build time, each without its last line break.
    @Test func builtInCatalogueAndProfilesMatchFixtures() throws {
        let sources = try ScenarioLoader.sources(paths: [Package.path("Fixtures/scenarios")])
        let prefix = Package.path("Fixtures/scenarios") + "/"
        var onDisk = Dictionary(uniqueKeysWithValues: sources.map { (String($0.path.dropFirst(prefix.count)), $0.text) })
        let list = Package.path("Fixtures/scenarios/expected-failures.txt")
        if let text = try? String(contentsOfFile: list, encoding: .utf8) { onDisk["expected-failures.txt"] = text }
        let embedded = Dictionary(uniqueKeysWithValues: EmbeddedCatalogue.files.map { ($0.path, $0.text) })
        #expect(Set(embedded.keys) == Set(onDisk.keys), "the EmbedFixtures plugin missed or added a file")
        for (path, text) in onDisk where embedded[path] != text.trimmingTrailingNewline {
            Issue.record("\(path) differs from the built-in copy")
        }
        let profiles = try FileManager.default.contentsOfDirectory(atPath: Package.path("Fixtures/profiles")).filter { $0.hasSuffix(".yaml") }
        #expect(Set(profiles.map { String($0.dropLast(5)) }) == Set(EmbeddedProfiles.files.keys))
        for file in profiles {
            let text = try String(contentsOfFile: Package.path("Fixtures/profiles/" + file), encoding: .utf8)
            #expect(EmbeddedProfiles.files[String(file.dropLast(5))] == text.trimmingTrailingNewline, "the EmbedFixtures plugin missed or added a file")
        }
    }
}

extension String {
    /// A Swift multi-line literal drops the file's final newline.
    var trimmingTrailingNewline: String { hasSuffix("\n") ? String(dropLast()) : self }
}

import ChatProtocol
import ConformanceHarness
import Foundation
import MockChatTestSupport
@testable import ProtocolFuzzer
import Testing

/// `mockchat fuzz --sdk` end to end: the reference model served by `mockchat driver`
/// (built with the tests), and the same driver made faulty on purpose by
/// Fixtures/faulty-driver.py.
@Suite(.serialized) struct SDKFuzzerTests {
    static let root = PackagePaths.root
    static let mockchat = PackagePaths.mockchat

    static let referenceDriver = "'\(mockchat)' driver --profiles '\(root.path)/Fixtures/profiles'"

    static func faulty(_ mode: String) -> String {
        "python3 '\(root.path)/Tests/ProtocolFuzzerTests/Fixtures/faulty-driver.py' \(mode) \(referenceDriver)"
    }

    func options(_ driver: String, seed: UInt64, steps: Int, length: Int = 20) -> SDKFuzzer.Options {
        var options = SDKFuzzer.Options()
        options.seed = seed
        options.steps = steps
        options.historyLength = length
        options.outputFolder = nil
        options.jobs = 2
        options.stopAtFirst = true
        options.shrinkBudgetSeconds = 60
        options.runner.driver = .command(driver)
        // Generous: on a loaded machine a driver process can take seconds to start.
        options.runner.driverTimeout = 15
        return options
    }

    @Test func theReferenceModelThroughItsDriverAgreesWithItself() throws {
        let report = try SDKFuzzer(options: options(Self.referenceDriver, seed: 5, steps: 300)).run()
        #expect(report.steps == 300)
        #expect(report.histories >= 15)
        #expect(report.divergences == 0, "\(report.findings.map(\.message))")
        #expect(report.badDriverRuns == 0 && report.crashes == 0 && report.unsupported == 0, "\(report.crashMessages)")
        // The histories reach the SDK and its environment alike.
        for kind in ["login", "didBackground", "network down", "second device", "peer online", "server drop", "advance"] {
            #expect(report.stepsByKind[kind, default: 0] > 0, "\(kind): \(report.stepsByKind)")
        }
    }

    /// A driver that loses one socket attempt stands in for an SDK bug: the run finds
    /// it, shrinks it to a few actions, and writes a file that fails the same way
    /// through that driver and passes on the reference model.
    @Test func aDifferenceIsShrunkAndWrittenAsAScenarioThatFailsTheSameWay() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sdk-fuzz-test-\(getpid())").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let driver = Self.faulty("drop-attempt:2")
        var options = options(driver, seed: 1, steps: 2_000, length: 12)
        options.outputFolder = folder
        let report = try SDKFuzzer(options: options).run()
        let finding = try #require(report.findings.first)
        #expect(finding.signature == "app.connectAttempts", "\(finding.message)")
        #expect(finding.reproduces && finding.referencePasses, "\(finding.shrunkMessage)")
        #expect(finding.baselinePasses == nil)
        #expect(finding.shrunkActions <= 5, "\(finding.scenarioText)")
        // Classified by the rules the model applied at that action, all in the rule book.
        #expect(!finding.rules.isEmpty && finding.level != .uncited, "\(finding.rules)")
        #expect(finding.rules.allSatisfy { RuleBook.embedded.rule($0) != nil }, "\(finding.rules)")
        let path = try #require(finding.path)
        let scenario = try ScenarioLoader.load(String(contentsOfFile: path, encoding: .utf8), path: path)
        var runner = CatalogueRunner.Options()
        runner.driver = .command(driver)
        #expect(ScenarioRunner(options: runner).run(scenario).verdict == .failed)
        runner.driver = .command(Self.referenceDriver)
        #expect(ScenarioRunner(options: runner).run(scenario).verdict == .passed)
    }

    @Test(arguments: [("crash-on:didBackground", "driver crash"), ("junk-on:foreground", "driver junk"),
                      ("hang-on:network", "driver hang")])
    func aBadDriverIsReportedAsSuchWithAShrunkHistory(mode: String, signature: String) throws {
        var options = options(Self.faulty(mode), seed: 2, steps: 400, length: 12)
        // A hang costs the whole timeout on every candidate that still hangs.
        if signature == "driver hang" { options.runner.driverTimeout = 4 }
        let report = try SDKFuzzer(options: options).run()
        #expect(report.divergences == 0)
        #expect(report.badDriverRuns >= 1)
        let finding = try #require(report.findings.first)
        #expect(finding.signature == signature, "\(finding.message)")
        #expect(finding.shrunkActions == 1, "\(finding.scenarioText)")
        #expect(finding.reproduces, "\(finding.shrunkMessage)")
        #expect(finding.scenarioText.contains("app.\(mode.split(separator: ":")[1])"), "\(finding.scenarioText)")
    }

    /// A command the driver refuses as unsupported is taken out, never a difference.
    @Test func aRefusedCommandIsLeftOutAndIsNoDifference() throws {
        var options = options(Self.faulty("unsupported-on:ping"), seed: 3, steps: 300)
        options.stopAtFirst = false
        let report = try SDKFuzzer(options: options).run()
        #expect(report.refusedCommands == ["ping"])
        #expect(report.divergences == 0 && report.badDriverRuns == 0, "\(report.findings.map(\.message))")
        #expect(report.stepsByKind["ping"] == nil)
    }

    /// With a baseline that has the same fault, every difference is known.
    @Test func differencesTheBaselineSharesAreKnownNotReported() throws {
        var options = options(Self.faulty("drop-attempt:2"), seed: 1, steps: 120, length: 12)
        options.stopAtFirst = false
        options.baseline = .command(Self.faulty("drop-attempt:2"))
        let report = try SDKFuzzer(options: options).run()
        #expect(report.knownDifferences > 0)
        #expect(report.divergences == 0 && report.findings.isEmpty, "\(report.findings.map(\.message))")
    }

    @Test func theGeneratorUsesOnlyTheDriversCommands() {
        let generator = AppHistoryGenerator(commands: ["create", "init", "login", "connect", "inspect"], profiles: ["nexconn-ios"])
        for seed in 1...20 {
            let history = generator.generate(seed: UInt64(seed), length: 50)
            #expect(history.profile == "nexconn-ios")
            for action in history.actions {
                if let command = action.command { #expect(["init", "login", "connect"].contains(command)) }
            }
        }
        #expect(generator.generate(seed: 4, length: 30) == generator.generate(seed: 4, length: 30))
    }

    /// A difference counts by the levels of the rules the model cited at that action, graded
    /// as `mockchat test` grades a failed step: a documented rule beside a decision fails
    /// (fails before this change: the fuzzer called it a deviation), a waiver makes it
    /// waived, a declared parameter makes it a failure.
    @Test func aDifferenceIsClassifiedByTheLevelsOfTheCitedRules() throws {
        let book = RuleBook.embedded
        let documented = "connection.login-opens-socket", decision = "reconnection.status-connecting-during-backoff"
        let parameter = "reconnection.backoff-schedule"
        #expect(book.rule(documented)?.level == .documented && book.rule(decision)?.level == .decision)
        let waiving = try Manifest.read("waivers: [{ rule: \(decision), reason: ours differs }]", origin: "m.yaml")
        let declaring = try Manifest.read("parameters: { reconnectBackoff: { steps: [1], repeatEvery: 2 } }", origin: "m.yaml")
        func level(_ rules: [String], _ manifest: Manifest? = nil, badDriver: Bool = false) -> DifferenceLevel {
            DifferenceLevel.of(rules: rules, badDriver: badDriver, book: book, manifest: manifest)
        }
        #expect(level([documented]) == .failure)
        #expect(level([documented, decision]) == .failure)
        #expect(level([decision]) == .deviation)
        #expect(level([decision], waiving) == .waived)
        #expect(level([documented, decision], waiving) == .failure)
        #expect(level([parameter]) == .deviation)
        #expect(level([parameter], declaring) == .failure)
        #expect(level([]) == .uncited)
        #expect(level(["connection.no-such-rule"]) == .uncited)
        #expect(level([], badDriver: true) == .failure)
        // The harness grades a failed step resting on the same rules alike.
        for (rules, manifest) in [([documented, decision], nil), ([decision], waiving), ([parameter], declaring), ([decision], nil)] as [([String], Manifest?)] {
            let harness = Verdicts.grade(rules.compactMap(book.rule), manifest: manifest).verdict
            let expected: DifferenceLevel = harness == .waived ? .waived : harness == .deviation ? .deviation : .failure
            #expect(level(rules, manifest) == expected, "\(rules)")
        }
    }

    /// Every rule the reference model cites while histories run is in the rule book.
    @Test func theModelCitesOnlyRulesOfTheRuleBook() throws {
        let generator = AppHistoryGenerator(commands: Set(["create", "inspect"] + DriverCodec.sdkCommands),
                                             profiles: ["cometchat-ios", "nexconn-ios"])
        var options = SDKFuzzer.Options()
        options.runner.driver = .command(Self.referenceDriver)
        let fuzzer = try SDKFuzzer(options: options)
        var cited: Set<String> = []
        for seed in 1...12 {
            guard let (_, records) = fuzzer.recordReference(generator.generate(seed: UInt64(seed), length: 30)) else { continue }
            cited.formUnion(records.last?[AppAction.client]?.citedRules ?? [])
        }
        #expect(cited.count > 20, "\(cited.sorted())")
        #expect(cited.filter { RuleBook.embedded.rule($0) == nil }.isEmpty, "\(cited.sorted())")
    }

    /// Histories log the app in as users who block (carol, ivan) and are blocked
    /// (mallory, judy), with the other side of the pair among the peers that come online.
    @Test func theAppUserSometimesBlocksOrIsBlocked() {
        let generator = AppHistoryGenerator(commands: ["create", "init", "login", "connect", "inspect"], profiles: ["cometchat-ios"])
        var users: Set<String> = [], pairsMet = 0
        for seed in 1...200 {
            let steps = generator.generate(seed: UInt64(seed), length: 40).actions.flatMap(\.steps).map(\.description)
            guard let login = steps.first(where: { $0.contains("app.login") }) else { continue }
            let user = ["alice", "carol", "mallory", "ivan", "judy"].first { login.contains("\"\($0)\"") } ?? "?"
            users.insert(user)
            let partner = ["carol": "mallory", "mallory": "carol", "ivan": "judy", "judy": "ivan"][user]
            if let partner, steps.contains(where: { $0.contains("\"uid\":\"\(partner)\"") }) { pairsMet += 1 }
        }
        #expect(users.isSuperset(of: ["alice", "carol", "mallory", "ivan", "judy"]))
        #expect(pairsMet > 0)
    }

    /// The comparison is the harness's assertions: a record that is wrong in one
    /// observation makes the reference model's own run fail at that action.
    @Test func aWrongRecordFailsTheComparison() throws {
        let history = AppHistory(seed: 1, profile: "cometchat-ios", app: nil, actions: [
            .call("init", ["autoEstablishSocketConnection": true, "presence": "all"]), .call("login", "alice"),
            .environment("didBackground"), .advance(milliseconds: 30_000),
        ])
        let plain = try ComparisonScenario(history: history, id: "t", title: "t")
        var reference = CatalogueRunner.Options()
        reference.jobs = 1
        let (result, records) = ScenarioRunner(options: reference).record(plain.scenario)
        #expect(result.verdict == .passed, "\(result.message ?? "")")
        let right = try ComparisonScenario(history: history, id: "t", title: "t", checks: .everyStep, records: records)
        #expect(ScenarioRunner(options: reference).run(right.scenario).verdict == .passed)
        var wrong = records
        wrong[wrong.count - 1][AppAction.client]!.attempts.append(30.05)
        let built = try ComparisonScenario(history: history, id: "t", title: "t", checks: .everyStep, records: wrong)
        let failed = ScenarioRunner(options: reference).run(built.scenario)
        guard case .differed(let difference) = SDKOutcome(failed, built: built) else {
            Issue.record("expected a difference, got \(failed.verdict): \(failed.message ?? "")")
            return
        }
        #expect(difference.signature == "app.connectAttempts")
        #expect(difference.action == 3)
    }
}

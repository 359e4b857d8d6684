import ChatProtocol
import ConformanceHarness
import Dispatch
import Foundation
import MockChatCore
import Synchronization

/// `mockchat fuzz --sdk`: random app histories run through an SDK's driver and through
/// the built-in reference model, each against a fresh in-process server, and compared.
///
/// For each history the reference model runs first (in virtual time, on the harness's
/// own loop) and every observation of the app's client is recorded after each action.
/// The history is then written as a scenario whose expectations are those records
/// (``ComparisonScenario``) and run through the driver; the first step that fails is a
/// difference. Actions the reference run cannot carry out (a wire client the server has
/// already closed) are dropped first, so the two runs always see the same history. The
/// first difference of each kind is shrunk and written as a scenario file.
public struct SDKFuzzer: Sendable {
    /// The campaign's options (``FuzzCampaign/Options``, read by name: `options.seed`)
    /// and the SDK run's own.
    public struct Options: FuzzCampaignPart, Sendable {
        public var campaign = FuzzCampaign.Options(steps: 2_000)
        public var historyLength = 40
        /// End the run at the first difference (after shrinking it).
        public var stopAtFirst = false
        /// How the driver runs: the driver source, its timeout, wall-clock mode and tolerance.
        public var runner = CatalogueRunner.Options()
        /// Another driver of the same SDK (say, the release before a change): a history
        /// on which it too differs from the reference model, at the same action or
        /// earlier, counts as a known difference and is not reported.
        public var baseline: CatalogueRunner.DriverSource?
        /// How the fuzzer was started, for the comment of written files.
        public var commandLine = "mockchat fuzz --sdk"
        public init() {}

        public static var shared: WritableKeyPath<Self, FuzzCampaign.Options> { \.campaign }
    }

    /// A difference (or a bad driver), shrunk: the campaign's finding (read by name:
    /// `finding.signature`) and how it counts for an SDK.
    public struct Finding: FuzzCampaignPart, Sendable {
        public var shrunk: FuzzCampaign.Finding
        /// How the difference counts, by the rules the model applied there.
        public var level: DifferenceLevel = .failure
        /// Those rules' ids.
        public var rules: [String] = []
        public var historyNumber: Int
        /// Whether the written file passes on the reference model (what a fixed SDK does).
        public var referencePasses = false
        /// With a baseline: whether the written file passes through the baseline driver.
        public var baselinePasses: Bool?
        public var isBadDriver: Bool { shrunk.signature.hasPrefix("driver ") }

        public static var shared: WritableKeyPath<Self, FuzzCampaign.Finding> { \.shrunk }
    }

    /// The campaign's counts (``FuzzCampaign/Tally``, read by name: `report.steps`;
    /// `divergences` are the differences, bad drivers apart), the histories run, the
    /// differences shrunk, and what only an SDK run counts.
    public struct Report: FuzzCampaignPart, Sendable {
        public var tally: FuzzCampaign.Tally
        public var sdk = ""
        public var histories = 0
        public var findings: [Finding] = []
        /// Differences that did not show again when the history ran a second time:
        /// the SDK or its driver is not deterministic there. Reported, not shrunk.
        public var flaky = 0
        public var flakyMessages: [String] = []
        /// Differences the baseline driver shows as well (with ``Options/baseline``).
        public var knownDifferences = 0
        public var badDriverRuns = 0
        /// Histories cut short by a step the driver refused as unsupported (after the
        /// command was taken out of the history, or because the run was skipped).
        public var unsupported = 0
        /// Commands in the handshake that the driver refused as unsupported; later
        /// histories leave them out.
        public var refusedCommands: [String] = []
        public var unsupportedMessages: [String] = []
        /// Differences by level (``DifferenceLevel``); waived ones are counted here only.
        public var differencesByLevel: [DifferenceLevel: Int] = [:]
        /// For each uncited difference kind (a defect of the rule book), one message.
        public var uncitedMessages: [String: String] = [:]

        public init(seed: UInt64, sdk: String) {
            tally = FuzzCampaign.Tally(seed: seed)
            self.sdk = sdk
        }

        public static var shared: WritableKeyPath<Self, FuzzCampaign.Tally> { \.tally }
    }

    public typealias Progress = FuzzCampaign.Progress

    /// A history after its runs: the actions the reference model could carry out, the
    /// scenario the driver ran, and how that ended.
    struct Examined: Sendable {
        var history: AppHistory
        var built: ComparisonScenario
        var outcome: SDKOutcome
        /// Commands the driver refused as unsupported, taken out of the history.
        var refused: Set<String> = []
        /// Whether the baseline driver differs here too.
        var known = false
        /// Whether the difference did not show again on a second run.
        var flaky = false
    }

    public var options: Options
    /// The driver's handshake.
    public let capabilities: DriverCapabilities

    /// Reads the driver's handshake (an error when it cannot be reached). Without a manifest
    /// in `options.runner`, the one of the driver's hello applies: the reference model takes
    /// its declared values and differences are graded with its waivers and values.
    public init(options: Options) throws(ScenarioError) {
        guard let driver = options.runner.driver else { throw ScenarioError("no driver given") }
        self.options = options
        capabilities = try driver.handshake(timeout: options.runner.driverTimeout)
        if self.options.runner.manifest == nil, let hello = capabilities.manifest {
            self.options.runner.manifest = try Manifest.read(hello: hello, origin: "the driver's hello")
        }
        guard !profiles.isEmpty else {
            throw ScenarioError("the driver implements none of the profiles \(Self.knownProfiles.joined(separator: ", "))")
        }
        guard capabilities.commands.contains("create") else { throw ScenarioError("the driver does not support 'create'") }
    }

    static let knownProfiles = ["cometchat-ios", "nexconn-ios"]

    var profiles: [String] { Self.knownProfiles.filter(capabilities.profiles.contains) }

    var observables: ComparisonScenario.Observables {
        var observables = ComparisonScenario.Observables(commands: capabilities.commands, events: capabilities.events)
        observables.lastActiveAt = !options.runner.wallClock
        return observables
    }

    public func run(progress: (Progress) -> Void = { _ in }) -> Report {
        let started = Stopwatch()
        var report = Report(seed: options.seed, sdk: "\(capabilities.sdkName) \(capabilities.sdkVersion)")
        func snapshot(shrinking: Bool = false) -> Progress {
            Progress(report.tally, target: options.steps, histories: report.histories,
                     elapsedSeconds: started.elapsedSeconds, shrinking: shrinking)
        }
        var seeds = FuzzRandom(seed: options.seed)
        var generator = AppHistoryGenerator(commands: capabilities.commands, profiles: profiles)
        let shared: Bool = if case .listener = options.runner.driver { true } else { false }
        let workers = shared ? 1 : max(1, options.jobs)
        var shrunk: Set<String> = []
        var done = false
        while !done, options.campaign.goesOn(at: report.steps, elapsedSeconds: started.elapsedSeconds) {
            var batch: [(number: Int, history: AppHistory)] = []
            var allocated = report.steps
            while batch.count < workers, allocated < options.steps {
                let length = min(options.historyLength, options.steps - allocated)
                allocated += length
                let number = report.histories + batch.count + 1
                batch.append((number, generator.generate(seed: seeds.fork(), length: length)))
            }
            let pending = batch
            let results = Mutex([Examined?](repeating: nil, count: pending.count))
            DispatchQueue.concurrentPerform(iterations: pending.count) { index in
                let examined = examine(pending[index].history, id: "fuzz/sdk-history-\(pending[index].number)",
                                       confirming: true)
                results.withLock { $0[index] = examined }
            }
            for (run, examined) in zip(batch, results.withLock { $0 }) {
                report.histories += 1
                guard let examined else {
                    report.crashes += 1
                    report.crashMessages.append("history \(run.number) (seed \(run.history.seed)): the reference model could not run it")
                    continue
                }
                let actions = examined.history.actions
                for command in examined.refused where generator.commands.remove(command) != nil {
                    report.refusedCommands.append(command)
                }
                switch examined.outcome {
                case .agreed:
                    count(actions, into: &report)
                case .unsupported(let action, let message):
                    count(actions.prefix(action ?? 0), into: &report)
                    report.unsupported += 1
                    if report.unsupportedMessages.count < 5 { report.unsupportedMessages.append(message) }
                    // Refused before its first action: the driver cannot set up a client of
                    // this profile, so no later history of it could run either.
                    if action == nil, let gone = generator.profiles.firstIndex(of: examined.history.profile) {
                        generator.profiles.remove(at: gone)
                        if generator.profiles.isEmpty {
                            report.crashes += 1
                            report.crashMessages.append("the driver cannot set up a client of any profile: \(message)")
                            done = true
                        }
                    }
                case .crashed(let message):
                    report.crashes += 1
                    report.crashMessages.append("history \(run.number) (seed \(run.history.seed)): \(message)")
                case .differed(let difference) where examined.known:
                    count(actions[...difference.action], into: &report)
                    report.knownDifferences += 1
                case .differed(let difference) where examined.flaky:
                    count(actions[...difference.action], into: &report)
                    report.flaky += 1
                    if report.flakyMessages.count < 5 {
                        report.flakyMessages.append("history \(run.number) (seed \(run.history.seed)), \(difference.signature) "
                            + "after action \(difference.action + 1), not on a second run: "
                            + (difference.message.split(separator: "\n").dropFirst().first.map(String.init) ?? ""))
                    }
                case .differed(let difference):
                    count(actions[...difference.action], into: &report)
                    let level = DifferenceLevel.of(rules: difference.rules, badDriver: difference.isBadDriver, book: .embedded,
                                                   manifest: options.runner.manifest)
                    report.differencesByLevel[level, default: 0] += 1
                    if level == .waived { break }
                    if level == .uncited, report.uncitedMessages[difference.signature] == nil {
                        report.uncitedMessages[difference.signature] = "history \(run.number) (seed \(run.history.seed)), "
                            + "after action \(difference.action + 1) (\(run.history.actions[difference.action].kind))"
                    }
                    if difference.isBadDriver { report.badDriverRuns += 1 } else { report.divergences += 1 }
                    report.divergencesBySignature[difference.signature, default: 0] += 1
                    if report.findings.count < options.maxReports, shrunk.insert(difference.signature).inserted {
                        progress(snapshot(shrinking: true))
                        report.findings.append(shrink(examined, difference: difference, number: run.number,
                                                      stepsSoFar: report.steps, secondsSoFar: started.elapsedSeconds))
                    }
                    if options.stopAtFirst { done = true }
                }
                progress(snapshot())
                if done { break }
            }
        }
        report.wallSeconds = started.elapsedSeconds
        return report
    }

    /// Runs a history on the reference model, then through the driver. A command the
    /// driver refuses as unsupported is taken out of the history, which then runs
    /// again, so it never counts as a difference. Nil when the reference model cannot
    /// run the history at all. `confirming` runs a differing history through the
    /// driver a second time, to tell a difference from an SDK that is not deterministic.
    func examine(_ history: AppHistory, id: String, confirming: Bool = false) -> Examined? {
        var current = history
        var refused: Set<String> = []
        while true {
            guard let (valid, records) = recordReference(current) else { return nil }
            guard let built = try? ComparisonScenario(history: valid, id: id, title: "fuzzed SDK history", checks: .everyStep,
                                                      records: records, observables: observables) else { return nil }
            let result = ScenarioRunner(options: options.runner).run(built.scenario)
            var examined = Examined(history: valid, built: built, outcome: SDKOutcome(result, built: built), refused: refused)
            if confirming, case .differed(let difference) = examined.outcome, !difference.isBadDriver {
                let again = SDKOutcome(ScenarioRunner(options: options.runner).run(built.scenario), built: built)
                examined.flaky = !again.shows(difference)
            }
            if !examined.flaky, case .differed(let difference) = examined.outcome, let baseline = options.baseline {
                var runner = options.runner
                runner.driver = baseline
                if case .differed(let old) = SDKOutcome(ScenarioRunner(options: runner).run(built.scenario), built: built),
                   old.action <= difference.action {
                    examined.known = true
                }
            }
            guard case .unsupported(let action?, _) = examined.outcome, let command = valid.actions[action].command,
                  refused.insert(command).inserted else { return examined }
            examined.refused = refused
            current = valid.with(valid.actions.filter { $0.command != command })
        }
    }

    /// The reference model's records for the history, after dropping the actions it
    /// cannot carry out (each such action is removed and the history run again).
    func recordReference(_ history: AppHistory) -> (AppHistory, [[String: ClientRecord]])? {
        var current = history
        var reference = CatalogueRunner.Options()
        reference.jobs = 1
        reference.manifest = options.runner.manifest   // the model takes the SDK's declared values
        for _ in 0..<20 {
            guard let plain = try? ComparisonScenario(history: current, id: "fuzz/reference", title: "reference run") else {
                return nil
            }
            let (result, records) = ScenarioRunner(options: reference).record(plain.scenario)
            guard result.verdict == .failed else { return (current, records) }
            guard let step = result.failedStep, step <= plain.actionOfStep.count,
                  let action = plain.actionOfStep[step - 1] else { return nil }
            current.actions.remove(at: action)
        }
        return nil
    }

    private func count(_ actions: some Collection<AppAction>, into report: inout Report) {
        report.tally.count(kinds: actions.lazy.map(\.kind))
    }
}

import ChatProtocol
import ConformanceHarness
import Foundation
import MockChatCore

/// Model mode: random histories run against fresh in-process servers and checked,
/// after every action, against the ``ReferenceModel``.
///
/// A long run is cut into histories of ``Options/historyLength`` actions, each with
/// a fresh server and a seed derived from the run's seed, so a divergence can be
/// replayed and shrunk on its own. Histories run in parallel batches (one loop and
/// server per history) and their results are read in order, so a seed and a number
/// of jobs give the same run whatever the scheduling. The first divergence of each
/// kind is shrunk and written as a scenario file that `mockchat test` replays.
public struct ModelFuzzer: Sendable {
    /// The campaign's options (``FuzzCampaign/Options``, read by name: `options.seed`)
    /// and the model's own.
    public struct Options: FuzzCampaignPart, Sendable {
        public var campaign = FuzzCampaign.Options(steps: 20_000)
        public var historyLength = 200
        /// Times a history is continued past a divergence, with the action that showed
        /// it removed, so that one frequent divergence does not hide the others.
        public var continuations = 3
        public var generator = HistoryGenerator.Configuration()
        public init() {}

        public static var shared: WritableKeyPath<Self, FuzzCampaign.Options> { \.campaign }
    }

    /// A divergence, shrunk.
    public typealias Finding = FuzzCampaign.Finding

    /// The campaign's counts (``FuzzCampaign/Tally``, read by name: `report.steps`),
    /// the histories run and the divergences shrunk.
    public struct Report: FuzzCampaignPart, Sendable {
        public var tally: FuzzCampaign.Tally
        public var histories = 0
        public var findings: [Finding] = []

        public init(seed: UInt64) { tally = FuzzCampaign.Tally(seed: seed) }

        public static var shared: WritableKeyPath<Self, FuzzCampaign.Tally> { \.tally }
    }

    public typealias Progress = FuzzCampaign.Progress

    public var options: Options
    public let roster: Roster

    public init(options: Options, roster: Roster = .embedded()) {
        self.options = options
        self.roster = roster
    }

    public func run(progress: (Progress) -> Void = { _ in }) -> Report {
        let started = Stopwatch()
        func elapsed() -> Double { started.elapsedSeconds }
        func snapshot(_ report: Report, shrinking: Bool = false) -> Progress {
            Progress(report.tally, target: options.steps, elapsedSeconds: elapsed(), shrinking: shrinking)
        }
        var report = Report(seed: options.seed)
        var seeds = FuzzRandom(seed: options.seed)
        let generator = HistoryGenerator(roster: roster, configuration: options.generator)
        var runner = CatalogueRunner.Options()
        runner.jobs = max(1, options.jobs)
        var shrunkSignatures: Set<String> = []
        var continuations: [PendingRun] = []
        while options.campaign.goesOn(at: report.steps, elapsedSeconds: elapsed()) {
            // Continuations first, then new histories: enough for every worker, and no
            // more steps than are still to run.
            var batch = continuations
            continuations = []
            var allocated = report.steps + batch.reduce(0) { $0 + $1.built.actions.count - $1.verified }
            while batch.count < runner.jobs * 2, allocated < options.steps {
                let number = report.histories + batch.count + 1
                let length = min(options.historyLength, options.steps - allocated)
                let history = generator.generate(seed: seeds.fork(), length: length)
                allocated += length
                guard let built = try? HistoryScenario(history: history, roster: roster, id: "fuzz/history-\(number)",
                                                       title: "fuzzed history \(number)") else { continue }
                batch.append(PendingRun(number: number, history: history, built: built))
            }
            guard !batch.isEmpty else { break }
            let results = CatalogueRunner(options: runner).run(batch.map(\.built.scenario))
            for (run, result) in zip(batch, results) {
                if run.verified == 0 { report.histories += 1 }
                let actions = run.built.actions
                switch HistoryOutcome(result, built: run.built) {
                case .agreed:
                    count(actions[run.verified...], into: &report)
                case .diverged(let divergence):
                    count(actions[run.verified...divergence.action], into: &report)
                    report.divergences += 1
                    report.divergencesBySignature[divergence.signature, default: 0] += 1
                    // Each kind of divergence is shrunk once.
                    if report.findings.count < options.maxReports, shrunkSignatures.insert(divergence.signature).inserted {
                        progress(snapshot(report, shrinking: true))
                        report.findings.append(shrink(run.history, built: run.built, divergence: divergence,
                                                      number: run.number, stepsSoFar: report.steps, secondsSoFar: elapsed()))
                    }
                    if let next = run.continuing(after: divergence, roster: roster, limit: options.continuations) {
                        continuations.append(next)
                    }
                case .crashed(let message):
                    report.crashes += 1
                    report.crashMessages.append("history \(run.number) (seed \(run.history.seed)): \(message)")
                }
                progress(snapshot(report))
            }
        }
        report.wallSeconds = elapsed()
        return report
    }

    private func count(_ actions: some Collection<FuzzAction>, into report: inout Report) {
        report.tally.count(kinds: actions.lazy.map(\.kindName))
    }
}

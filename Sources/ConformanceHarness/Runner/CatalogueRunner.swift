import Dispatch
import Foundation
import Synchronization

/// Runs many scenarios, several at a time, each on its own thread with its own loop
/// and (by default) its own server.
public struct CatalogueRunner: Sendable {
    /// How to run.
    public struct Options: Sendable {
        /// Scenarios running at once.
        public var jobs = ProcessInfo.processInfo.activeProcessorCount
        /// Overrides every scenario's seed.
        public var seed: UInt64?
        /// Run against this external server (`ws://HOST:PORT`) instead of in-process ones.
        public var serverURL: String?
        /// Ids of scenarios known to fail.
        public var expectedFailures: Set<String> = []
        /// Where `<profile>.yaml` files live; nil: the profiles built into the binary.
        public var profilesFolder: String?
        /// Writes each scenario's full server trace and client logs here.
        public var traceDirectory: String?
        /// Keeps each run's timeline for the HTML report's sequence diagrams.
        public var recordTimeline = false
        /// Called with a line for each step as it runs (`--verbose`).
        public var stepLog: (@Sendable (String) -> Void)?
        /// Drive the scenarios' clients through this driver instead of the reference model.
        public var driver: DriverSource?
        /// Wall-clock seconds a driver has for each reply (and a settle for the whole exchange).
        public var driverTimeout = 10.0
        /// Real time: the server on the system clock, `advance` waits (docs/DRIVER.md).
        public var wallClock = false
        /// The tolerance of `at` checks in wall-clock mode, in seconds.
        public var tolerance = 0.1
        /// In wall-clock mode, scenarios that wait longer than this (seconds) are skipped.
        public var maxWait = 10.0
        /// What the SDK declares (`--manifest`, or the driver's hello): its parameter values
        /// replace MockChat's defaults, and its features and waivers grade the verdicts.
        public var manifest: Manifest?
        /// The rules verdicts are graded by.
        public var ruleBook: RuleBook = .embedded
        public init() {}
    }

    /// Where a run's driver comes from.
    public enum DriverSource: Sendable {
        /// `--sdk COMMAND`: a fresh process per scenario, over stdio.
        case command(String)
        /// `--sdk-listen HOST:PORT`: the driver that dialled in, shared by every scenario.
        case listener(DriverListener)

        func channel() throws(ScenarioError) -> DriverChannel {
            switch self {
            case .command(let command): try StdioDriverChannel(command: command)
            case .listener(let listener): listener
            }
        }
    }

    public var options: Options

    public init(options: Options) {
        self.options = options
    }

    /// Runs `scenarios`; `progress` is called (from any thread, serialised) after each.
    public func run(_ scenarios: [Scenario],
                    progress: @Sendable (_ done: Int, _ total: Int, _ result: ScenarioResult) -> Void = { _, _, _ in })
        -> [ScenarioResult]
    {
        let state = Mutex<(next: Int, done: Int, results: [ScenarioResult?])>(
            (0, 0, Array(repeating: nil, count: scenarios.count)))
        // An external server is shared, so its scenarios run one at a time.
        // A connected driver serves one scenario at a time too.
        let shared = options.serverURL != nil || { if case .listener = options.driver { true } else { false } }()
        let workers = shared ? 1 : max(1, min(options.jobs, scenarios.count))
        DispatchQueue.concurrentPerform(iterations: workers) { _ in
            while true {
                let index: Int? = state.withLock { state in
                    guard state.next < scenarios.count else { return nil }
                    defer { state.next += 1 }
                    return state.next
                }
                guard let index else { return }
                let result = grade(verdict(scenarios[index]))
                state.withLock { state in
                    state.results[index] = result
                    state.done += 1
                    progress(state.done, scenarios.count, result)
                }
            }
        }
        return state.withLock { $0.results.compactMap { $0 } }
    }

    /// Runs one scenario with the manifest's values and grades its outcome by the rule book;
    /// a scenario that needs an undeclared feature does not run.
    private func verdict(_ scenario: Scenario) -> ScenarioResult {
        if let manifest = options.manifest,
           let result = Verdicts.notApplicable(scenario, manifest: manifest, book: options.ruleBook) {
            return result
        }
        let resolved: Scenario
        do {
            resolved = try scenario.resolved(declaring: options.manifest?.parameters ?? [:], ruleBook: options.ruleBook)
        } catch {
            return ScenarioResult(id: scenario.id, title: scenario.title, source: scenario.source, path: scenario.path,
                                  verdict: .error, message: "with the values of \(options.manifest?.origin ?? "the manifest"): \(error)")
        }
        return Verdicts.classify(ScenarioRunner(options: options).run(resolved), scenario: resolved,
                                 manifest: options.manifest, book: options.ruleBook)
    }

    /// Applies the expected-failure list.
    private func grade(_ result: ScenarioResult) -> ScenarioResult {
        guard options.expectedFailures.contains(result.id) else { return result }
        var graded = result
        switch result.verdict {
        case .failed: graded.verdict = .expectedFailure
        case .passed:
            graded.verdict = .unexpectedPass
            graded.message = "listed as an expected failure but passed: remove it from the list"
        default: break
        }
        return graded
    }

    /// Reads an expected-failure list: one scenario id per line, `#` starts a comment.
    public static func loadExpectedFailures(_ path: String) throws(ScenarioError) -> Set<String> {
        guard let data = FileManager.default.contents(atPath: path) else { throw ScenarioError("cannot read \(path)") }
        return Set(expectedFailureLines(String(decoding: data, as: UTF8.self)).map(\.id))
    }

    /// The ids of an expected-failure list with their 1-based line numbers.
    static func expectedFailureLines(_ text: String) -> [(line: Int, id: String)] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            let id = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first?
                .trimmingCharacters(in: .whitespaces) ?? ""
            return id.isEmpty ? nil : (index + 1, id)
        }
    }
}

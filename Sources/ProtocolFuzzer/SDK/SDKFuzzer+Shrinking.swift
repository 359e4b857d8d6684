import ChatProtocol
import ConformanceHarness
import Foundation
import MockChatCore

extension SDKFuzzer {
    /// Shrinks a history that differs (or upset the driver) to a minimal one, writes it
    /// as a scenario whose expectations are the reference model's observations, and
    /// checks the file: through the driver it must fail the same way, on the reference
    /// model it must pass (what the SDK does once it is fixed), and so through the
    /// baseline driver when there is one.
    ///
    /// Delta debugging over the actions; each candidate is recorded on the reference
    /// model afresh, run through the driver, and cut after the action where it differed.
    /// Candidates run `jobs` at a time (one at a time with a connected driver).
    func shrink(_ examined: Examined, difference: SDKOutcome.Difference, number: Int, stepsSoFar: Int,
                secondsSoFar: Double) -> Finding {
        let started = Stopwatch()
        let history = examined.history
        let failing = Array(history.actions[...difference.action])
        var shrinker = Shrinker<AppAction>(budgetSeconds: options.shrinkBudgetSeconds)
        let shared: Bool = if case .listener = options.runner.driver { true } else { false }
        var shrunk = shrinker.minimize(failing, parallelism: shared ? 1 : max(1, options.jobs)) { [self] candidate in
            guard let run = examine(history.with(candidate), id: "fuzz/sdk-candidate"),
                  case .differed(let found) = run.outcome, !run.known, found.signature == difference.signature else { return nil }
            return Array(run.history.actions[...found.action])
        }
        var tests = shrinker.tests
        // What the reference model dropped while shrinking stays out of the file.
        if let (valid, _) = recordReference(history.with(shrunk)) { shrunk = valid.actions }

        let id = "regressions/sdk-fuzz-\(options.seed)-\(number)"
        let title = "Fuzzed SDK history \(number) of seed \(options.seed): \(difference.signature) differs from the reference model"
        var finding = Finding(
            shrunk: FuzzCampaign.Finding(
                signature: difference.signature, message: difference.message, historySeed: history.seed,
                originalActions: failing.count, shrunkActions: shrunk.count, foundAfterSteps: stepsSoFar,
                foundAfterSeconds: secondsSoFar, shrinkTests: tests),
            historyNumber: number)
        finding.rules = difference.rules
        finding.level = DifferenceLevel.of(rules: difference.rules, badDriver: difference.isBadDriver, book: .embedded,
                                           manifest: options.runner.manifest)
        let written = history.with(shrunk)
        if let (_, records) = recordReference(written) {
            // The short form (expectations after the last action) when it fails the same
            // way, else expectations after every action.
            for checks in [ComparisonScenario.Checks.lastStep, .everyStep] {
                guard let built = try? ComparisonScenario(history: written, id: id, title: title, checks: checks,
                                                          records: records, observables: observables) else { continue }
                let text = ScenarioWriter.yaml(
                    id: id, title: title, source: built.scenario.source, profile: written.profile, app: written.app,
                    seed: written.seed, steps: built.rawSteps,
                    comments: ["Found by `\(options.commandLine) --seed \(options.seed)` (history \(number));",
                               "shrunk from \(failing.count) actions to \(shrunk.count). The expectations are what the",
                               "reference model observed; replay with `mockchat test FILE --sdk COMMAND`."],
                    rules: difference.rules.filter { RuleBook.embedded.rule($0) != nil })
                finding.scenarioText = text
                finding.scenarioSteps = built.rawSteps.count
                guard let reloaded = try? ScenarioLoader.load(text, path: "<written>") else { continue }
                tests += 1
                let result = ScenarioRunner(options: options.runner).run(reloaded)
                finding.shrunkMessage = result.message ?? ""
                if case .differed(let found) = SDKOutcome(result, built: built), found.signature == difference.signature {
                    finding.reproduces = true
                    var reference = CatalogueRunner.Options()
                    reference.jobs = 1
                    finding.referencePasses = ScenarioRunner(options: reference).run(reloaded).verdict == .passed
                    if let baseline = options.baseline {
                        var runner = options.runner
                        runner.driver = baseline
                        finding.baselinePasses = ScenarioRunner(options: runner).run(reloaded).verdict == .passed
                    }
                    break
                }
            }
        }
        finding.shrinkTests = tests
        if let folder = options.outputFolder, !finding.scenarioText.isEmpty {
            finding.path = ScenarioWriter.save(finding.scenarioText, in: folder, as: "sdk-fuzz-\(options.seed)-\(number).yaml")
        }
        finding.shrinkSeconds = started.elapsedSeconds
        return finding
    }
}

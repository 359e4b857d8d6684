import ChatProtocol
import ConformanceHarness
import Foundation
import MockChatCore

extension ModelFuzzer {
    /// Runs `actions` as a history with these settings; what was built and how it ended.
    func execute(_ actions: [FuzzAction], seed: UInt64, settings: ReferenceModel.Settings,
                 checks: HistoryScenario.Checks = .everyStep) -> (HistoryScenario, HistoryOutcome)? {
        let candidate = History(seed: seed, settings: settings, actions: actions)
        guard let built = try? HistoryScenario(history: candidate, roster: roster, id: "fuzz/candidate",
                                               title: "candidate", checks: checks),
              !built.actions.isEmpty else { return nil }
        let result = ScenarioRunner(options: CatalogueRunner.Options()).run(built.scenario)
        return (built, HistoryOutcome(result, built: built))
    }

    /// Shrinks a diverging history, writes it as a scenario and checks that the file
    /// fails the same way.
    ///
    /// In order: delta debugging over the actions (each candidate cut after the action
    /// where it diverged); the default app settings instead of the history's, if the
    /// failure stays, then delta debugging again; plainer logins; wire clients named
    /// after their devices.
    func shrink(_ history: History, built: HistoryScenario, divergence: Divergence, number: Int,
                stepsSoFar: Int, secondsSoFar: Double) -> Finding {
        let started = Stopwatch()
        let failing = Array(built.actions[...divergence.action])
        var settings = history.settings
        var tests = 0
        func reduce(_ actions: [FuzzAction]) -> [FuzzAction] {
            var shrinker = Shrinker<FuzzAction>(budgetSeconds: options.shrinkBudgetSeconds)
            defer { tests += shrinker.tests }
            return shrinker.minimize(actions) { candidate in
                guard let (built, outcome) = execute(candidate, seed: history.seed, settings: settings),
                      case .diverged(let found) = outcome, found.signature == divergence.signature else { return nil }
                return Array(built.actions[...found.action])
            }
        }
        func stillFails(_ candidate: [FuzzAction], with candidateSettings: ReferenceModel.Settings? = nil) -> Bool {
            tests += 1
            guard let (_, outcome) = execute(candidate, seed: history.seed, settings: candidateSettings ?? settings),
                  case .diverged(let found) = outcome else { return false }
            return found.signature == divergence.signature
        }
        var shrunk = reduce(failing)
        if settings != ReferenceModel.Settings(), stillFails(shrunk, with: ReferenceModel.Settings()) {
            settings = ReferenceModel.Settings()
            shrunk = reduce(shrunk)
        }
        for index in shrunk.indices {
            while let simpler = shrunk[index].simplerLogins.first(where: { stillFails(replacing(index, in: shrunk, with: $0)) }) {
                shrunk[index] = simpler
            }
        }
        let renamed = Self.renamed(shrunk)
        if renamed != shrunk, stillFails(renamed) { shrunk = renamed }

        let id = "regressions/fuzz-\(options.seed)-\(number)"
        let title = "Fuzzed history \(number) of seed \(options.seed): \(divergence.signature) differs from the reference model"
        var finding = Finding(
            signature: divergence.signature, message: divergence.message, historySeed: history.seed,
            originalActions: failing.count, shrunkActions: shrunk.count, foundAfterSteps: stepsSoFar,
            foundAfterSeconds: secondsSoFar, shrinkTests: tests)
        // The short form (expectations after the last action only) when it fails the
        // same way, else the form with expectations after every action.
        for checks in [HistoryScenario.Checks.lastStep, .everyStep] {
            let candidate = History(seed: history.seed, settings: settings, actions: shrunk)
            guard let written = try? HistoryScenario(history: candidate, roster: roster, id: id, title: title,
                                                     checks: checks) else { continue }
            let text = ScenarioWriter.yaml(
                id: id, title: title, source: written.scenario.source, app: written.scenario.app, seed: history.seed,
                steps: written.rawSteps,
                comments: ["Found by `mockchat fuzz --mode model --seed \(options.seed)` (history \(number));",
                           "shrunk from \(failing.count) actions to \(shrunk.count). The expectations are the",
                           "reference model's prediction (Sources/ProtocolFuzzer/Model/ReferenceModel.swift)."])
            finding.scenarioText = text
            finding.scenarioSteps = written.rawSteps.count
            guard let reloaded = try? ScenarioLoader.load(text, path: "<written>") else { continue }
            let result = ScenarioRunner(options: CatalogueRunner.Options()).run(reloaded)
            finding.shrunkMessage = result.message ?? ""
            if case .diverged(let found) = HistoryOutcome(result, built: written), found.signature == divergence.signature {
                finding.reproduces = true
                break
            }
        }
        if let folder = options.outputFolder {
            finding.path = ScenarioWriter.save(finding.scenarioText, in: folder, as: "fuzz-\(options.seed)-\(number).yaml")
        }
        finding.shrinkSeconds = started.elapsedSeconds
        return finding
    }

    /// Renames wire clients after their device, numbered in order of appearance.
    static func renamed(_ actions: [FuzzAction]) -> [FuzzAction] {
        var names: [String: String] = [:]
        var used: [String: Int] = [:]
        var firstLogin: [String: String] = [:]
        for action in actions {
            if case .login(let name, let login) = action, firstLogin[name] == nil { firstLogin[name] = login.device }
        }
        for action in actions {
            guard case .connect(let name, let login) = action, names[name] == nil else { continue }
            let base = login?.device ?? firstLogin[name] ?? name.split(separator: "-").prefix(2).joined(separator: "-")
            let count = used[base, default: 0] + 1
            used[base] = count
            names[name] = count == 1 ? base : "\(base)-\(count)"
        }
        return actions.map { $0.renamingWire(names) }
    }

    private func replacing(_ index: Int, in actions: [FuzzAction], with action: FuzzAction) -> [FuzzAction] {
        var copy = actions
        copy[index] = action
        return copy
    }
}

import ConformanceHarness

/// How a history's run ended, read from the runner's result.
public enum HistoryOutcome: Sendable, Equatable {
    /// Every expectation held.
    case agreed
    /// The server and the model disagree.
    case diverged(Divergence)
    /// The run could not be carried out at all (set-up failed): counted as a crash.
    case crashed(String)

    public init(_ result: ScenarioResult, built: HistoryScenario) {
        guard result.verdict == .failed else {
            self = .agreed
            return
        }
        guard let step = result.failedStep, step >= 1, step <= built.actionOfStep.count else {
            self = .crashed(result.message ?? "the run failed before its first step")
            return
        }
        let action = built.actionOfStep[step - 1]
        let message = result.message ?? ""
        let signature = Divergence.signature(of: message, check: built.checkOfStep[step - 1],
                                             action: built.actions[action])
        self = .diverged(Divergence(signature: signature, message: message, action: action, step: step))
    }
}

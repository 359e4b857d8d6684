import ConformanceHarness

/// How a history's run through the driver ended, read from the runner's result.
public enum SDKOutcome: Sendable, Equatable {
    /// Everything the SDK did matched the reference model.
    case agreed
    /// The SDK and the model differ (or the driver misbehaved) after `action`.
    case differed(Difference)
    /// The driver refused a step as `unsupported` or `unknown-command`: not a difference.
    case unsupported(action: Int?, message: String)
    /// The run could not start (no server, a driver that never said hello).
    case crashed(String)

    /// A difference, or a bad driver, with where it showed.
    public struct Difference: Sendable, Equatable {
        /// What differed, without names or values, so that shrinking keeps candidates
        /// that fail the same way: `app.connectAttempts`, `call login` (the error code
        /// differs), or for a bad driver `driver crash`, `driver hang`, `driver junk`
        /// or `driver failed`.
        public var signature: String
        /// The runner's message: the step, what was expected and what was found.
        public var message: String
        /// Index of the action after which it showed.
        public var action: Int
        /// The rule-book rules the reference model applied during that action.
        public var rules: [String] = []
        public var isBadDriver: Bool { signature.hasPrefix("driver ") }
    }

    public init(_ result: ScenarioResult, built: ComparisonScenario) {
        let action = result.failedStep.flatMap { step in
            step >= 1 && step <= built.actionOfStep.count ? built.actionOfStep[step - 1] : nil
        }
        guard result.verdict == .failed else {
            self = result.verdict == .skipped ? .unsupported(action: action, message: result.message ?? "skipped") : .agreed
            return
        }
        let message = result.message ?? ""
        if let refusal = Self.refusal(message), ["unsupported", "unknown-command"].contains(refusal) {
            self = .unsupported(action: action, message: message)
            return
        }
        guard let action else {
            self = .crashed(message)
            return
        }
        let signature: String
        if let kind = Self.badDriverKind(message) {
            signature = "driver \(kind)"
        } else if let step = result.failedStep, built.isCheck[step - 1] {
            signature = Self.assertion(in: message) ?? "expect"
        } else {
            // The step's key, such as `app.login`: its method names the call.
            let key = result.failedStep.flatMap { built.rawSteps[$0 - 1].objectValue?.first { _ in true }?.key } ?? "step"
            signature = "call " + (key.split(separator: ".").last.map(String.init) ?? key)
        }
        let rules = action < built.rulesOfAction.count ? built.rulesOfAction[action] : []
        self = .differed(Difference(signature: signature, message: message, action: action, rules: rules))
    }

    /// Whether this outcome shows `difference` again: the same kind after the same action.
    func shows(_ difference: Difference) -> Bool {
        guard case .differed(let found) = self else { return false }
        return found.signature == difference.signature && found.action == difference.action
    }

    /// The `SUBJECT.PROPERTY` of the failing assertion's `expected:` line.
    private static func assertion(in message: String) -> String? {
        for line in message.split(separator: "\n") where line.hasPrefix("expected: ") {
            return String(line.dropFirst("expected: ".count).prefix { $0 != ":" })
        }
        return nil
    }

    /// The protocol error code of a driver's refusal (`driver X refused DOING: CODE: text`).
    private static func refusal(_ message: String) -> String? {
        guard let line = message.split(separator: "\n").first(where: { $0.hasPrefix("driver ") }),
              let range = line.range(of: " refused ") else { return nil }
        let parts = line[range.upperBound...].split(separator: ":", maxSplits: 2)
        return parts.count >= 2 ? parts[1].trimmingCharacters(in: .whitespaces) : nil
    }

    /// How a driver misbehaved, from the harness's message (docs/DRIVER.md, "Bad drivers").
    private static func badDriverKind(_ message: String) -> String? {
        guard let line = message.split(separator: "\n").first(where: { $0.hasPrefix("driver ") }) else { return nil }
        if line.contains(" did not answer within ") { return "hang" }
        if line.contains(" exited") || line.contains(" stopped reading") || line.contains(" closed") || line.contains(" killed") {
            return "crash"
        }
        if line.contains(" refused ") { return "failed" }
        return "junk"
    }
}

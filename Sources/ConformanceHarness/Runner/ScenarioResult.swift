/// The outcome of one scenario.
public struct ScenarioResult: Sendable {
    /// Graded verdicts, after autobahn-testsuite's.
    public enum Verdict: String, Sendable {
        case passed
        case failed
        case skipped
        /// Failed, and listed as a known failure.
        case expectedFailure = "expected-failure"
        /// Listed as a known failure but passed: the list is out of date.
        case unexpectedPass = "unexpected-pass"
    }

    public var id: String
    public var title: String
    public var source: String
    public var path: String
    public var verdict: Verdict
    /// Why it failed or was skipped.
    public var message: String?
    /// The step that failed, or that the driver refused as unsupported (1-based).
    public var failedStep: Int?
    /// The last lines of the server trace when it failed.
    public var traceTail: [String]
    /// The whole server trace as JSON lines (used by the determinism check).
    public var trace: [UInt8]
    /// Wall-clock seconds the scenario took.
    public var wallSeconds: Double
    /// Virtual seconds the scenario covered.
    public var virtualSeconds: Double

    /// The area: the first component of the id.
    public var area: String { String(id.split(separator: "/").first ?? Substring(id)) }

    /// Whether the verdict counts against the run.
    public var isFailure: Bool { verdict == .failed || verdict == .unexpectedPass }
}

/// The outcome of one scenario.
public struct ScenarioResult: Sendable {
    /// Graded verdicts, after autobahn-testsuite's.
    public enum Verdict: String, Sendable {
        case passed
        /// A documented rule broken, or a declared parameter value not honoured.
        case failed
        /// A decision or parameter differs from MockChat's default and the manifest does not declare it.
        case deviation
        /// Differs where the manifest waives the rule, with a reason.
        case waived
        /// Needs a feature the manifest does not declare (or another profile).
        case notApplicable = "not-applicable"
        case skipped
        /// Failed, and listed as a known failure.
        case expectedFailure = "expected-failure"
        /// Listed as a known failure but passed: the list is out of date.
        case unexpectedPass = "unexpected-pass"
        /// The file could not be loaded.
        case error
    }

    public var id: String
    public var title: String
    public var source: String
    public var path: String
    public var verdict: Verdict
    /// Why it failed or was skipped.
    public var message: String?
    /// The rules a non-pass verdict rests on, as `id (level): text` (waivers add their reason).
    public var rules: [String] = []
    /// The step that failed, or that the driver refused as unsupported (1-based).
    public var failedStep: Int?
    /// The server trace around the failing time, keep-alive pings left out.
    public var traceTail: [String]
    /// Each client's most recent log lines when it failed, by client name.
    public var clientLogs: [(client: String, lines: [String])] = []
    /// What happened, at virtual times, for the sequence diagram of the HTML report.
    public var timeline: [TimelineEvent] = []
    /// The scenario's client and wire names, in order of declaration.
    public var lanes: [String] = []
    /// Virtual seconds at which the failing step ran.
    public var failedAt: Double?
    /// The whole server trace as JSON lines (used by the determinism check).
    public var trace: [UInt8]
    /// Wall-clock seconds the scenario took.
    public var wallSeconds: Double
    /// Virtual seconds the scenario covered.
    public var virtualSeconds: Double

    /// The area: the first component of the id.
    public var area: String { String(id.split(separator: "/").first ?? Substring(id)) }

    /// Whether the verdict counts against the run.
    public var isFailure: Bool { verdict == .failed || verdict == .unexpectedPass || verdict == .error }

    public init(id: String, title: String, source: String, path: String, verdict: Verdict, message: String? = nil,
                traceTail: [String] = [], trace: [UInt8] = [], wallSeconds: Double = 0, virtualSeconds: Double = 0) {
        self.id = id
        self.title = title
        self.source = source
        self.path = path
        self.verdict = verdict
        self.message = message
        self.traceTail = traceTail
        self.trace = trace
        self.wallSeconds = wallSeconds
        self.virtualSeconds = virtualSeconds
    }

    /// The result of a file that could not be loaded: an `error` verdict named after the file.
    public init(broken: BrokenScenario) {
        // Named like the files around it: folder/stem (or the path below a `scenarios/` folder).
        var id = broken.path
        if let range = id.range(of: "scenarios/", options: .backwards) {
            id = String(id[range.upperBound...])
        } else {
            id = id.split(separator: "/").suffix(2).joined(separator: "/")
        }
        for suffix in [".yaml", ".yml"] where id.hasSuffix(suffix) { id = String(id.dropLast(suffix.count)) }
        self.init(id: id, title: "(not loaded)", source: "", path: broken.path, verdict: .error,
                  message: broken.error.description)
    }
}

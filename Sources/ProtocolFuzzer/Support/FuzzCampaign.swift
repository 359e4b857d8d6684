import Foundation

/// The campaign model the three fuzzers share (``ModelFuzzer``, ``WireFuzzer`` in wire and
/// inputs mode, ``SDKFuzzer``): what a run is asked to do (``Options``), a finding shrunk
/// to a scenario (``Finding``), what a run counts (``Tally``) and the snapshot its progress
/// line shows (``Progress``). Each fuzzer keeps these as its `campaign`, `tally` or `shrunk`
/// and adds only what is its own; its types read the shared fields by name (`options.seed`,
/// `report.steps`) as ``FuzzCampaignPart``s.
public enum FuzzCampaign {
    /// What every campaign is asked to do.
    public struct Options: Sendable {
        public var seed: UInt64 = 1
        /// Work to run in total: actions of histories (model, SDK) or inputs (wire, inputs).
        public var steps: Int
        /// Stop starting new work after this many seconds.
        public var seconds: Double?
        /// Histories run at once, or wire workers.
        public var jobs = ProcessInfo.processInfo.activeProcessorCount
        /// Where shrunk scenarios are written; nil writes nothing.
        public var outputFolder: String? = "fuzz-out"
        /// Kinds of finding (by signature) to shrink and write; the rest are counted.
        public var maxReports = 3
        /// Wall time one shrink may take.
        public var shrinkBudgetSeconds = 120.0

        public init(steps: Int) { self.steps = steps }

        /// Whether a run that has reached step `step` after `elapsedSeconds` goes on:
        /// within both the steps and the seconds asked for.
        public func goesOn(at step: Int, elapsedSeconds: Double) -> Bool {
            step < steps && seconds.map { elapsedSeconds < $0 } ?? true
        }
    }

    /// A finding (a divergence from the model, a difference from the reference SDK),
    /// shrunk and written as a scenario file.
    public struct Finding: Sendable {
        public var signature: String
        /// The runner's message for the original history.
        public var message: String
        /// The runner's message for the written scenario.
        public var shrunkMessage: String = ""
        public var historySeed: UInt64
        /// Actions of the history up to the finding, and after shrinking.
        public var originalActions: Int
        public var shrunkActions: Int
        /// Steps of the written scenario.
        public var scenarioSteps = 0
        /// Actions run (in all histories) and seconds spent until it showed.
        public var foundAfterSteps: Int
        public var foundAfterSeconds: Double
        public var shrinkSeconds = 0.0
        /// Candidates run while shrinking and checking.
        public var shrinkTests: Int
        /// The written scenario and where it went.
        public var scenarioText = ""
        public var path: String?
        /// Whether the written file, loaded back and run, fails the same way.
        public var reproduces = false

        public init(signature: String, message: String, historySeed: UInt64, originalActions: Int, shrunkActions: Int,
                    foundAfterSteps: Int, foundAfterSeconds: Double, shrinkTests: Int) {
            self.signature = signature
            self.message = message
            self.historySeed = historySeed
            self.originalActions = originalActions
            self.shrunkActions = shrunkActions
            self.foundAfterSteps = foundAfterSteps
            self.foundAfterSeconds = foundAfterSeconds
            self.shrinkTests = shrinkTests
        }
    }

    /// What every run counts.
    public struct Tally: Sendable {
        public var seed: UInt64
        /// Actions or inputs run.
        public var steps = 0
        /// Findings (divergences, differences), shrunk or not.
        public var divergences = 0
        /// Runs that ended the server or the model, with what was seen.
        public var crashes = 0
        public var crashMessages: [String] = []
        public var wallSeconds = 0.0
        /// Actions or inputs run, by kind.
        public var stepsByKind: [String: Int] = [:]
        /// Findings, by signature.
        public var divergencesBySignature: [String: Int] = [:]

        public init(seed: UInt64) { self.seed = seed }

        /// Counts steps run, given by their kinds.
        public mutating func count(kinds: some Sequence<String>) {
            for kind in kinds {
                steps += 1
                stepsByKind[kind, default: 0] += 1
            }
        }
    }

    /// A snapshot for the progress line.
    public struct Progress: Sendable {
        /// Actions or inputs run, and the run's target (`Int.max`: none).
        public var steps: Int
        public var target: Int
        /// Histories run (model, SDK).
        public var histories = 0
        public var divergences: Int
        public var crashes: Int
        public var elapsedSeconds: Double
        /// True while a finding is being shrunk.
        public var shrinking = false

        public init(_ tally: Tally, target: Int, histories: Int = 0, elapsedSeconds: Double, shrinking: Bool = false) {
            steps = tally.steps
            self.target = target
            self.histories = histories
            divergences = tally.divergences
            crashes = tally.crashes
            self.elapsedSeconds = elapsedSeconds
            self.shrinking = shrinking
        }
    }
}

/// A fuzzer's own type around a shared part of the campaign model (its options around
/// ``FuzzCampaign/Options``, its report around ``FuzzCampaign/Tally``, its finding around
/// ``FuzzCampaign/Finding``), whose fields it reads by name: `options.seed`, `report.steps`.
@dynamicMemberLookup
public protocol FuzzCampaignPart {
    associatedtype Shared
    /// Where the shared part is kept.
    static var shared: WritableKeyPath<Self, Shared> { get }
}

extension FuzzCampaignPart {
    public subscript<Value>(dynamicMember path: WritableKeyPath<Shared, Value>) -> Value {
        get { self[keyPath: Self.shared.appending(path: path)] }
        set { self[keyPath: Self.shared.appending(path: path)] = newValue }
    }
}

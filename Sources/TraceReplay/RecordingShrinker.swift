import ChatProtocol
import ConformanceHarness
import MockChatCore

/// Reduces a recording to the fewest actions that still show one observation (the
/// assertions of an `expect` step, such as `alice.frames: {event: user.online, user.uid: bob}`).
///
/// A candidate is a subset of the recording's actions, each at its recorded time,
/// the clock moved to the end of the recording, then the observation; it shows the
/// bug when the scenario passes. The search is the delta debugging the fuzzers use too
/// (``Shrinker``), so the result is 1-minimal when the budget allows; then each wait
/// between the kept actions that the observation does not need is taken out.
public struct RecordingShrinker {
    /// What a shrink did.
    public struct Outcome: Sendable {
        /// Actions of the recording, and of the shrunk scenario.
        public var actionsBefore: Int
        public var actionsAfter: Int
        /// Scenario steps (actions, advances and the observation) before and after.
        public var stepsBefore: Int
        public var stepsAfter: Int
        /// Candidates run.
        public var tests: Int
        public var seconds: Double
        /// The shrunk scenario's steps.
        public var steps: [JSONValue]
    }

    public var recording: Recording
    /// The `expect` mapping that shows the bug.
    public var observation: JSONValue
    public var budgetSeconds: Double

    public init(recording: Recording, observation: JSONValue, budgetSeconds: Double = 120) {
        self.recording = recording
        self.observation = observation
        self.budgetSeconds = budgetSeconds
    }

    /// Shrinks; fails when the whole recording does not show the observation.
    public func shrink() throws(ScenarioError) -> Outcome {
        let started = Stopwatch()
        let all = recording.actionIndices
        let full = recording.steps(keeping: all, observing: observation)
        let result = run(full)
        guard result.verdict == .passed else {
            throw ScenarioError("the observation does not hold on the whole recording, so there is nothing to shrink to:\n"
                + (result.message ?? "\(result.verdict)"))
        }
        var shrinker = Shrinker<Int>(budgetSeconds: budgetSeconds)
        let kept = shrinker.minimize(all) { candidate in
            run(recording.steps(keeping: candidate, observing: observation)).verdict == .passed ? candidate : nil
        }
        let (times, end, timeTests) = closedUp(kept)
        let steps = recording.steps(keeping: kept, at: times, until: end, observing: observation)
        return Outcome(actionsBefore: all.count, actionsAfter: kept.count, stepsBefore: full.count, stepsAfter: steps.count,
                       tests: shrinker.tests + 1 + timeTests,
                       seconds: started.elapsedSeconds, steps: steps)
    }

    /// Times for the kept actions with each wait that the observation does not need
    /// taken out, earliest first, and the end (the last wait too, when it is not needed);
    /// how many candidates that took.
    func closedUp(_ kept: [Int]) -> (times: [Int64], end: Int64, tests: Int) {
        var times = kept.map { recording.moments[$0].at }
        var tail = recording.end - (times.last ?? 0)
        var tests = 0
        func shows(_ candidate: [Int64], _ tail: Int64) -> Bool {
            tests += 1
            let steps = recording.steps(keeping: kept, at: candidate, until: (candidate.last ?? 0) + tail, observing: observation)
            return run(steps).verdict == .passed
        }
        for index in times.indices {
            let gap = times[index] - (index == 0 ? 0 : times[index - 1])
            guard gap > 0 else { continue }
            let candidate = times.enumerated().map { $0.offset >= index ? $0.element - gap : $0.element }
            if shows(candidate, tail) { times = candidate }
        }
        if tail > 0, shows(times, 0) { tail = 0 }
        return (times, (times.last ?? 0) + tail, tests)
    }

    /// Runs steps as a scenario on a fresh in-process server.
    func run(_ steps: [JSONValue]) -> ScenarioResult {
        do {
            let scenario = try recording.scenario(id: "shrink/candidate", steps: steps)
            return ScenarioRunner(options: CatalogueRunner.Options()).run(scenario)
        } catch {
            return ScenarioResult(id: "shrink/candidate", title: "", source: "", path: "", verdict: .failed,
                                  message: "\(error)")
        }
    }
}

import ChatProtocol
import ConformanceHarness

/// A recorded session as scenario material: what the clients and the control API did,
/// each at its time, and what the server did before the next of them.
///
/// ``RecordingReader`` builds it from a trace file; ``steps()`` writes it as a scenario
/// whose expectations are what the server sent, and ``steps(keeping:at:until:observing:)`` as
/// the actions alone followed by one observation, which is what shrinking works on.
public struct Recording: Sendable {
    /// One point of the session.
    public struct Moment: Sendable {
        /// Milliseconds since the server started.
        public var at: Int64
        /// The step that happened then; nil when only time passed (the server acted on a timer).
        public var action: JSONValue?
        /// The trace line it came from.
        public var line: Int
        /// What the server did until the next moment: `subject.property: value` assertions.
        public var expectations = JSONObject()
    }

    /// `virtual` or `system`: the clock of the recorded server.
    public var clock: String
    /// App settings of the recorded server that differ from the built-in ones (the scenario's `app`).
    public var app: JSONValue?
    public var moments: [Moment] = []
    /// Checks after the last moment: frames each wire client received in all, and whether it is open.
    public var finalChecks = JSONObject()
    /// How far a replayed time may be from the recorded one: 0 under the virtual clock;
    /// under the system clock, gaps shorter than this are not replayed.
    public var toleranceMilliseconds: Int64
    /// When the recording ends, in milliseconds since the server started.
    public var end: Int64

    /// Indices of the moments that have an action.
    public var actionIndices: [Int] { moments.indices.filter { moments[$0].action != nil } }

    /// The scenario steps: each action at its time, followed by what the server did.
    public func steps() -> [JSONValue] {
        var steps: [JSONValue] = []
        var now: Int64 = 0
        // A moment where only time passed is covered by the next one's advance.
        for moment in moments where moment.action != nil || !moment.expectations.isEmpty {
            advance(to: moment.at, from: &now, into: &steps)
            if let action = moment.action { steps.append(action) }
            if !moment.expectations.isEmpty { steps.append(["expect": .object(moment.expectations)]) }
        }
        if !finalChecks.isEmpty { steps.append(["expect": .object(finalChecks)]) }
        return steps
    }

    /// The actions of the moments at `indices` at their recorded times (or at `times`,
    /// one per index), the clock moved on to `end` (default: the end of the recording),
    /// then `observation` (an `expect` mapping).
    public func steps(keeping indices: [Int], at times: [Int64]? = nil, until end: Int64? = nil,
                      observing observation: JSONValue) -> [JSONValue] {
        var steps: [JSONValue] = []
        var now: Int64 = 0
        for (offset, index) in indices.enumerated() {
            guard let action = moments[index].action else { continue }
            advance(to: times?[offset] ?? moments[index].at, from: &now, into: &steps)
            steps.append(action)
        }
        advance(to: end ?? self.end, from: &now, into: &steps)
        steps.append(["expect": observation])
        return steps
    }

    /// An `advance` step to `target` unless the clock is within the tolerance of it.
    private func advance(to target: Int64, from now: inout Int64, into steps: inout [JSONValue]) {
        guard target - now > toleranceMilliseconds else { return }
        steps.append(["advance": .string(ScenarioWriter.duration(target - now))])
        now = target
    }

    /// The scenario as a file, written by ``ScenarioWriter``.
    public func yaml(id: String, title: String, source: String, steps: [JSONValue], comments: [String]) -> String {
        ScenarioWriter.yaml(id: id, title: title, source: source, app: app, seed: 1, steps: steps, comments: comments)
    }

    /// The steps as a scenario to run, checked by the typed loader.
    public func scenario(id: String, steps: [JSONValue]) throws(ScenarioError) -> Scenario {
        Scenario(id: id, title: id, source: "a recording", app: app, seed: 1, steps: try ScenarioLoader.steps(steps))
    }
}

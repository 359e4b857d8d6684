import ChatProtocol
import ConformanceHarness

/// A history turned into a scenario the conformance runner executes: the model
/// replays the actions, drops those that cannot happen, and follows each kept action
/// with an `expect` step holding its prediction. A failing `expect` is a divergence
/// between the server and the model.
public struct HistoryScenario: Sendable {
    /// Which expectations to write.
    public enum Checks: Sendable {
        /// After every action: how the fuzzer runs histories.
        case everyStep
        /// After the last action only: the short form written for a shrunk history,
        /// whose earlier expectations all held.
        case lastStep
    }

    public var scenario: Scenario
    /// The actions the model accepted, in order.
    public var actions: [FuzzAction]
    /// For each scenario step (1-based number - 1), the index of its action.
    public var actionOfStep: [Int]
    /// For each scenario step, the group it checks; nil for action steps.
    public var checkOfStep: [ReferenceModel.CheckGroup?]
    /// The scenario's steps as written in a file.
    public var rawSteps: [JSONValue]

    public init(history: History, roster: Roster, id: String, title: String, checks: Checks = .everyStep)
        throws(ScenarioError)
    {
        var model = ReferenceModel(roster: roster, settings: history.settings)
        var kept: [FuzzAction] = []
        for action in history.actions where model.apply(action) { kept.append(action) }
        model = ReferenceModel(roster: roster, settings: history.settings)
        actions = kept
        rawSteps = []
        actionOfStep = []
        checkOfStep = []
        for (index, action) in kept.enumerated() {
            model.apply(action)
            for step in action.steps {
                rawSteps.append(step)
                actionOfStep.append(index)
                checkOfStep.append(nil)
            }
            guard checks == .everyStep || index == kept.count - 1 else { continue }
            for (group, assertions) in model.expectations() {
                rawSteps.append(["expect": assertions])
                actionOfStep.append(index)
                checkOfStep.append(group)
            }
        }
        let steps = try ScenarioLoader.steps(rawSteps)
        scenario = Scenario(
            id: id, title: title, source: "mockchat fuzz: docs/PROTOCOL.md sections 4, 7, 8, 9 and 12.7",
            app: Self.app(history.settings), seed: history.seed, steps: steps)
    }

    /// The scenario's `app` mapping for these settings.
    static func app(_ settings: ReferenceModel.Settings) -> JSONValue {
        FuzzAction.appSettings(clientKickControl: settings.clientKickControl,
                               mobileDevicesPerUser: settings.mobileDevicesPerUser)
    }
}

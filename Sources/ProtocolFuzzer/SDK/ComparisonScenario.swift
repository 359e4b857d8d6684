import ChatProtocol
import ConformanceHarness

/// An SDK history as a scenario: the app's client, then each action's steps. Built
/// without expectations, it is what the reference model is recorded on; built with the
/// recording, each action is followed by an `expect` step holding what the reference
/// model observed, and each call that failed there carries `expect_error`. Run through
/// a driver, the first step that fails is a difference between the SDK and the model,
/// and a written file fails the same way in `mockchat test FILE --sdk COMMAND`.
///
/// What is compared (docs/FUZZING.md, "Comparison rules"), for the app's client:
/// `status`, `loggedInUser` and `backgroundTaskEnabled` (equal); `connectionEvents`
/// (the same list); `connectionListeners` (each connection listener's calls);
/// `connectAttempts` (the same number of socket openings, each at the
/// same time within the run's tolerance); `received` (the same presence events: each
/// change, user, listener, time, user's lastActiveAt and blocking flags with its count,
/// and the total); `result` of the last call (the same error code, or success with the
/// same user, status, flag or page).
/// An observation is compared only when the driver's handshake lists the event kind
/// or command it comes from.
public struct ComparisonScenario: Sendable {
    /// Which `expect` steps to write.
    public enum Checks: Sendable {
        /// None: the scenario the reference model is recorded on.
        case none
        /// After every action: how histories are run.
        case everyStep
        /// After the last action only: the short form of a shrunk history.
        case lastStep
    }

    /// What the driver can report; assertions it cannot answer are left out.
    public struct Observables: Sendable {
        public var inspect: Bool
        public var connection: Bool
        public var connectionListener: Bool
        public var socketOpening: Bool
        public var presence: Bool
        /// Whether users' `lastActiveAt` is compared (not in wall-clock runs, where the
        /// server's clock is the system's).
        public var lastActiveAt = true

        public init(commands: Set<String>, events: Set<String>) {
            inspect = commands.contains("inspect")
            connection = events.contains("connection")
            connectionListener = events.contains("connectionListener")
            socketOpening = events.contains("socketOpening")
            presence = events.contains("presence")
        }

        /// Everything (the reference model reports it all).
        public static let all = Observables(commands: ["inspect"],
                                            events: ["connection", "connectionListener", "socketOpening", "presence"])
    }

    public var scenario: Scenario
    /// The steps as written in a file.
    public var rawSteps: [JSONValue]
    /// For each step (number - 1), the index of its action; nil for the client's creation.
    public var actionOfStep: [Int?]
    /// For each step, whether it is an `expect` step.
    public var isCheck: [Bool]
    /// For each action, the rule-book rules the reference model applied while it ran
    /// (empty when built without records).
    public var rulesOfAction: [[String]] = []

    /// `records` holds, for each step of the `.none` form, every client after it.
    public init(history: AppHistory, id: String, title: String, checks: Checks = .none,
                records: [[String: ClientRecord]] = [], observables: Observables = .all) throws(ScenarioError)
    {
        rawSteps = [["client": .string(AppAction.client)]]
        actionOfStep = [nil]
        isCheck = [false]
        var plainStep = 1
        var listeners: Set<String> = []
        for (index, action) in history.actions.enumerated() {
            if action.command == "addConnectionListener", let id = action.steps.first?.objectValue?.first(where: { _ in true })?.value.stringValue {
                listeners.insert(id)
            }
            plainStep += action.steps.count
            let record = checks == .none ? nil : records[plainStep - 1][AppAction.client]
            for (offset, step) in action.steps.enumerated() {
                var step = step
                if action.isCall, offset == action.steps.count - 1, let code = record?.lastResult?["error"] {
                    var fields = step.objectValue ?? JSONObject()
                    fields["expect_error"] = code
                    step = .object(fields)
                }
                rawSteps.append(step)
                actionOfStep.append(index)
                isCheck.append(false)
            }
            guard let record, checks == .everyStep || index == history.actions.count - 1 else { continue }
            rawSteps.append(["expect": .object(Self.expectations(record, listeners: listeners, observables: observables))])
            actionOfStep.append(index)
            isCheck.append(true)
        }
        if !records.isEmpty {
            var before = 0
            for index in history.actions.indices {
                let cited = records[Self.recordIndex(after: index, in: history)][AppAction.client]?.citedRules ?? []
                var unique: [String] = []
                for id in cited.dropFirst(min(before, cited.count)) where !unique.contains(id) { unique.append(id) }
                rulesOfAction.append(unique)
                before = cited.count
            }
        }
        let steps = try ScenarioLoader.steps(rawSteps)
        scenario = Scenario(id: id, title: title, source: "mockchat fuzz --sdk: the reference model (docs/FUZZING.md)",
                            profile: history.profile, app: history.app, seed: history.seed, steps: steps)
    }

    /// The plain form's step after which `action` is complete (0-based into records).
    static func recordIndex(after action: Int, in history: AppHistory) -> Int {
        history.actions[...action].reduce(0) { $0 + $1.steps.count }
    }

    /// The assertions that check an SDK client against `record`; `listeners` are the
    /// connection listener ids added so far (each is checked, also when never called).
    static func expectations(_ record: ClientRecord, listeners: Set<String>, observables: Observables) -> JSONObject {
        let subject = AppAction.client
        var checks = JSONObject()
        if observables.inspect {
            checks["\(subject).status"] = .string(record.status)
            checks["\(subject).loggedInUser"] = record.loggedInUser.map { .string($0) } ?? .null
            checks["\(subject).backgroundTaskEnabled"] = .bool(record.backgroundTaskEnabled)
        }
        if observables.connection {
            checks["\(subject).connectionEvents"] = .array(record.connectionEvents.map { .string($0) })
        }
        if observables.connectionListener, !listeners.isEmpty {
            checks["\(subject).connectionListeners"] = .object(JSONObject(listeners.sorted().map { id in
                (id, .array((record.listenerCalls[id] ?? []).map { .string($0) }))
            }))
        }
        if observables.socketOpening {
            checks["\(subject).connectAttempts"] = ["at": .array(record.attempts.map(Self.seconds)), "exact": true]
        }
        if observables.presence {
            var patterns: [JSONValue] = []
            var counted: [ClientRecord.PresenceEvent: Int] = [:]
            var order: [ClientRecord.PresenceEvent] = []
            for event in record.presence {
                if counted[event] == nil { order.append(event) }
                counted[event, default: 0] += 1
            }
            for event in order {
                var pattern = JSONObject([("event", .string(event.change)), ("uid", .string(event.uid)),
                                          ("listener", .string(event.listener)), ("at", Self.seconds(event.at))])
                if observables.lastActiveAt { pattern["lastActiveAt"] = .double(event.lastActiveAt) }
                pattern["hasBlockedMe"] = .bool(event.hasBlockedMe)
                pattern["blockedByMe"] = .bool(event.blockedByMe)
                pattern["count"] = .integer(Int64(counted[event]!))
                patterns.append(.object(pattern))
            }
            patterns.append(["count": .integer(Int64(record.presence.count))])
            checks["\(subject).received"] = .array(patterns)
        }
        if var result = record.lastResult {
            if !observables.lastActiveAt, var user = result["user"]?.objectValue, var fields = result.objectValue {
                user["lastActiveAt"] = nil
                fields["user"] = .object(user)
                result = .object(fields)
            }
            checks["\(subject).result"] = result
        }
        return checks
    }

    /// Scenario seconds as written: whole seconds as integers, else milliseconds exact.
    private static func seconds(_ value: Double) -> JSONValue {
        let milliseconds = Int64((value * 1000).rounded())
        return milliseconds % 1000 == 0 ? .integer(milliseconds / 1000) : .double(Double(milliseconds) / 1000)
    }
}

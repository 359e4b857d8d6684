import ChatProtocol

/// Faults injected through the control API: the standing misbehaviour of the server.
///
/// A fault names its targets by uid and optionally device id; an empty selector
/// matches every connection. Everything the server does to a connection's frames
/// goes through its ``LinkShape`` per direction, so delay, jitter, bandwidth, slicing
/// and drops combine on one path; scripted replies replace the engine's answer to
/// matching requests.
public struct FaultPlan: Sendable {
    /// Which connections a fault applies to.
    public struct Selector: Sendable, Equatable {
        public var uid: String?
        public var deviceId: String?

        public init(uid: String? = nil, deviceId: String? = nil) {
            self.uid = uid
            self.deviceId = deviceId
        }

        public func matches(uid: String?, deviceId: String?) -> Bool {
            (self.uid == nil || self.uid == uid) && (self.deviceId == nil || self.deviceId == deviceId)
        }

        var isEmpty: Bool { uid == nil && deviceId == nil }

        var json: JSONValue {
            var object = JSONObject()
            if let uid { object["uid"] = .string(uid) }
            if let deviceId { object["deviceId"] = .string(deviceId) }
            return .object(object)
        }
    }

    /// A link shape for the matching connections' frames in one direction.
    public struct LinkRule: Sendable {
        public var selector: Selector
        public var direction: LinkDirection
        public var shape: LinkShape
    }

    /// A silent network path for the matching connections (docs/PROTOCOL.md, 12.7,
    /// "Silence"): nothing crosses it either way until it is lifted.
    public struct Silence: Sendable, Equatable {
        /// Matches logged-in sessions; empty with no `connection`: every connection.
        public var selector: Selector
        /// One connection (`"c3"`), logged in or not, instead of the selector.
        public var connection: String?
        /// New connection attempts by the same clients hang (true) or go through, as
        /// after an interface change (false).
        public var hangsNewConnections: Bool

        /// Whether two rules are for the same targets (setting one replaces the other).
        func sameTargets(_ other: Silence) -> Bool { selector == other.selector && connection == other.connection }

        /// Whether it silences every connection.
        var isEverybody: Bool { selector.isEmpty && connection == nil }

        var json: JSONValue {
            var object = JSONObject([("selector", selector.json)])
            if let connection { object["connection"] = .string(connection) }
            object["newConnections"] = .string(hangsNewConnections ? "hang" : "pass")
            return .object(object)
        }
    }

    /// How new upgrades are answered, when they are not answered as usual.
    public var upgrade: UpgradeFault?
    /// Upgrade faults with a selector: they count the logins they match and answer
    /// the chosen ones (docs/PROTOCOL.md, 12.7, "Upgrades").
    public var loginUpgrades: [UpgradeFault] = []
    /// Latency on whole connections, in the order set; the last match counts.
    public var latencies: [LatencyRule] = []
    /// Slow closes, in the order set; the last match counts.
    public var slowCloses: [SlowCloseRule] = []
    /// Cuts in the order they were set; the last one matching a connection counts.
    public var cuts: [CutFault] = []
    /// Silences in the order they were set.
    public var silences: [Silence] = []
    /// Frames from these connections vanish and nothing is sent to them: a dead path
    /// on which pings go unanswered.
    public var blackholes: [Selector] = []
    /// New WebSocket handshakes are cut off, as if the server were unreachable.
    public var refuseConnections = false
    /// New WebSocket handshakes complete, then nothing is read or answered.
    public var stallAfterHandshake = false
    /// Link shapes in the order they were set; the last one matching a connection and
    /// direction applies.
    public var links: [LinkRule] = []
    /// Links for chosen frames only, in the order they were set; the last one matching
    /// a frame takes it.
    public var selectedLinks: [SelectedLink] = []
    /// Scripted answers, tried in the order they were set.
    public var replies: [ScriptedReply] = []

    public init() {}

    /// No blackhole, link or link for chosen frames: frames cross as they are.
    var leavesFramesAlone: Bool { blackholes.isEmpty && links.isEmpty && selectedLinks.isEmpty }

    public func isBlackholed(uid: String?, deviceId: String?) -> Bool {
        blackholes.contains { $0.matches(uid: uid, deviceId: deviceId) }
    }

    /// The index of the link rule for a connection and direction, if any.
    func link(_ direction: LinkDirection, uid: String?, deviceId: String?) -> Int? {
        guard !links.isEmpty else { return nil }
        return links.lastIndex { $0.direction == direction && $0.selector.matches(uid: uid, deviceId: deviceId) }
    }

    /// Sets (or with `shape` nil, removes) the rule for a selector and direction.
    mutating func setLink(_ selector: Selector, _ direction: LinkDirection, _ shape: LinkShape?) {
        links.removeAll { $0.selector == selector && $0.direction == direction }
        if let shape { links.append(LinkRule(selector: selector, direction: direction, shape: shape)) }
    }

    /// The first scripted reply for a request from a connection, counting it as used.
    mutating func takeReply(for request: JSONValue, uid: String?, deviceId: String?) -> ScriptedReply? {
        guard let index = replies.firstIndex(where: { $0.matches(request, uid: uid, deviceId: deviceId) }) else {
            return nil
        }
        let reply = replies[index]
        if let left = reply.times {
            if left <= 1 { replies.remove(at: index) } else { replies[index].times = left - 1 }
        }
        return reply
    }

    public var json: JSONValue {
        .object(JSONObject([
            ("blackholes", .array(blackholes.map(\.json))),
            ("refuseConnections", .bool(refuseConnections)),
            ("stallAfterHandshake", .bool(stallAfterHandshake)),
            ("links", .array(links.map { rule in
                var object = JSONObject([("selector", rule.selector.json), ("direction", .string(rule.direction.rawValue))])
                for (key, value) in rule.shape.json { object[key] = value }
                return .object(object)
            } + selectedLinks.map(\.json))),
            ("replies", .array(replies.map(\.json))),
            ("silences", .array(silences.map(\.json))),
            ("upgrade", upgrade?.json ?? .null),
            ("cuts", .array(cuts.map(\.json))),
            ("loginUpgrades", .array(loginUpgrades.map(\.json))),
            ("latencies", .array(latencies.map(\.json))),
            ("slowCloses", .array(slowCloses.map(\.json))),
        ]))
    }
}

/// A canned answer to matching requests: a result or an error, optionally late,
/// a number of times or until cleared.
public struct ScriptedReply: Sendable {
    public var selector: FaultPlan.Selector
    /// The request's `op`.
    public var op: String
    /// Top-level request fields that must be equal, e.g. `{"uid":"bob"}` for `users.get`.
    public var fields: JSONObject
    /// Either `{"result": ...}` or `{"error": {...}}`: what follows the request's `id`.
    public var answer: (key: String, value: JSONValue)
    public var delayMs: Int64
    /// Uses left; nil: every time.
    public var times: Int?

    func matches(_ request: JSONValue, uid: String?, deviceId: String?) -> Bool {
        guard request["op"]?.stringValue == op, selector.matches(uid: uid, deviceId: deviceId) else { return false }
        return fields.allSatisfy { key, value in request[key] == value }
    }

    /// The reply frame for `request`, carrying its `id` (null when it had none).
    func frame(answering request: JSONValue) -> JSONValue {
        .object(JSONObject([("id", request["id"] ?? .null), (answer.key, answer.value)]))
    }

    var json: JSONValue {
        var object = JSONObject([("selector", selector.json), ("op", .string(op))])
        if !fields.isEmpty { object["match"] = .object(fields) }
        object[answer.key] = answer.value
        if delayMs > 0 { object["delayMs"] = .integer(delayMs) }
        object["times"] = times.map { .integer(Int64($0)) } ?? .null
        return .object(object)
    }
}

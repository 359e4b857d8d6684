import ChatProtocol

/// Network faults injected through the control API.
///
/// A fault names its targets by uid and optionally device id; an empty selector
/// matches every connection.
public struct FaultPlan: Sendable, Equatable {
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

        var json: JSONValue {
            var object = JSONObject()
            if let uid { object["uid"] = .string(uid) }
            if let deviceId { object["deviceId"] = .string(deviceId) }
            return .object(object)
        }
    }

    /// Frames from these connections vanish and nothing is sent to them: a dead path
    /// on which pings go unanswered.
    public var blackholes: [Selector] = []
    /// New WebSocket handshakes are cut off, as if the server were unreachable.
    public var refuseConnections = false
    /// Outgoing frames (and closes) to matching connections wait this many milliseconds.
    public var delays: [(selector: Selector, milliseconds: Int64)] = []

    public init() {}

    public func isBlackholed(uid: String?, deviceId: String?) -> Bool {
        blackholes.contains { $0.matches(uid: uid, deviceId: deviceId) }
    }

    public func delay(uid: String?, deviceId: String?) -> Int64 {
        guard !delays.isEmpty else { return 0 }
        return delays.filter { $0.selector.matches(uid: uid, deviceId: deviceId) }.map(\.milliseconds).max() ?? 0
    }

    public var json: JSONValue {
        .object(JSONObject([
            ("blackholes", .array(blackholes.map(\.json))),
            ("refuseConnections", .bool(refuseConnections)),
            ("delays", .array(delays.map { .object(JSONObject([("selector", $0.selector.json),
                                                                ("ms", .integer($0.milliseconds))])) })),
        ]))
    }

    public static func == (a: FaultPlan, b: FaultPlan) -> Bool {
        a.blackholes == b.blackholes && a.refuseConnections == b.refuseConnections
            && a.delays.map(\.selector) == b.delays.map(\.selector) && a.delays.map(\.milliseconds) == b.delays.map(\.milliseconds)
    }
}

import ChatProtocol
import EventLoop

/// A link rule for chosen frames only (docs/PROTOCOL.md, 12.7, "Selected frames"): the
/// replies to one op, the events of one kind, or the requests of one op. Matching
/// frames are delayed, held until the rule is removed, dropped or duplicated, each on
/// its own, while the connection's other frames go past them: a held reply arrives
/// after events sent later.
public struct SelectedLink: Sendable {
    /// Which frames the rule takes.
    public enum Frames: Sendable, Equatable {
        /// Outbound: the reply to a request with this `op`.
        case reply(String)
        /// Outbound: an event with this `event` name.
        case event(String)
        /// Inbound: a request with this `op`.
        case request(String)

        var direction: LinkDirection {
            if case .request = self { return .inbound }
            return .outbound
        }

        var json: JSONValue {
            switch self {
            case .reply(let op): ["reply": .string(op)]
            case .event(let name): ["event": .string(name)]
            case .request(let op): ["op": .string(op)]
            }
        }

        /// Whether `frame` is one of these; `replyTo` is the op of the request a
        /// frame answers, when it is a reply.
        func matches(_ frame: JSONValue?, replyTo: String?) -> Bool {
            switch self {
            case .reply(let op): replyTo == op
            case .event(let name): frame?["event"]?.stringValue == name
            case .request(let op): frame?["op"]?.stringValue == op
            }
        }
    }

    public var selector: FaultPlan.Selector
    public var frames: Frames
    /// Delay, jitter and drops (with their seed) for the matching frames.
    public var shape: LinkShape
    /// Held until the rule is removed (`enabled: false`, `DELETE`, a reset).
    public var hold: Bool
    /// Each matching frame is delivered twice.
    public var duplicate: Bool
    /// Matching frames left to take; nil: every one.
    public var times: Int?

    var direction: LinkDirection { frames.direction }

    func sameTargets(_ other: SelectedLink) -> Bool { selector == other.selector && frames == other.frames }

    var json: JSONValue {
        var object = JSONObject([("selector", selector.json), ("direction", .string(direction.rawValue)), ("frames", frames.json)])
        for (key, value) in shape.json { object[key] = value }
        if hold { object["hold"] = true }
        if duplicate { object["duplicate"] = true }
        object["times"] = times.map { .integer(Int64($0)) } ?? .null
        return .object(object)
    }
}

/// A frame a selected link holds until its rule is removed.
struct SelectedHold {
    var rule: SelectedLink
    var connection: ConnectionID
    /// The frame's bytes (both copies of a duplicate): what it counts in the
    /// connection's unsent output (out) or in what its link holds (in).
    var bytes: Int
    var deliver: () -> Void
}

extension FaultPlan {
    /// The selected link that takes `frame` of `bytes` bytes from (inbound) or to
    /// (outbound) a connection, with when the frame leaves it (nil: dropped), counting
    /// the frame as taken. Frames leave in no order but their own times.
    mutating func takeSelectedLink(_ direction: LinkDirection, _ frame: JSONValue?, replyTo: String?, bytes: Int,
                                   now: Instant, uid: String?, deviceId: String?) -> (rule: SelectedLink, leaves: Instant?)? {
        guard let index = selectedLinks.lastIndex(where: { rule in
            rule.direction == direction && rule.selector.matches(uid: uid, deviceId: deviceId)
                && rule.frames.matches(frame, replyTo: replyTo)
        }) else { return nil }
        let leaves = selectedLinks[index].shape.departure(of: bytes, at: now, after: nil)
        let rule = selectedLinks[index]
        if let left = rule.times {
            if left <= 1 { selectedLinks.remove(at: index) } else { selectedLinks[index].times = left - 1 }
        }
        return (rule, leaves)
    }

    /// Sets (or with `enabled` false, removes) the selected link for its selector and frames.
    mutating func setSelectedLink(_ rule: SelectedLink, enabled: Bool) {
        selectedLinks.removeAll { $0.sameTargets(rule) }
        if enabled { selectedLinks.append(rule) }
    }
}
